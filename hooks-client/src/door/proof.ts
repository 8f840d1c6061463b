// Is the listener on the door's port cairn's own? Whoever asks sends a fresh random challenge; cairn's door
// answers HMAC-SHA256(nonce, "cairn-door-v1 <port> <challenge>"). A squatter learns nothing usable from this:
// the challenge is random and carries no secret, the nonce never crosses the wire in either direction, and an
// answer it might get from the real door (when the real one holds the port, the squatter cannot) is for a
// challenge no client will send again.
import type { IncomingMessage } from 'node:http';

export const CHALLENGE_PATH = '/cairn/door/challenge';
const CHALLENGE_RE = /^[0-9a-f]{64}$/;

const hex = (b: ArrayBuffer | Uint8Array) =>
  Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString('hex');

export const newChallenge = (): string => hex(globalThis.crypto.getRandomValues(new Uint8Array(32)));

export const isChallenge = (v: string): boolean => CHALLENGE_RE.test(v);

/** The door's answer to `challenge` on `port`, keyed by `nonce` (Web Crypto: node:crypto is not loaded). */
export async function doorProof(nonce: string, port: number, challenge: string): Promise<string> {
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey('raw', Buffer.from(nonce), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return hex(await subtle.sign('HMAC', key, Buffer.from(`cairn-door-v1 ${port} ${challenge}`)));
}

/**
 * What listens on 127.0.0.1:`port`: nothing (`free`), cairn's door with this nonce (`ours`), or anything else
 * (`foreign`: a listener that does not answer within `timeoutMs`, answers wrongly or is not HTTP).
 */
export async function probeDoor(port: number, nonce: string, timeoutMs: number): Promise<'free' | 'ours' | 'foreign'> {
  const challenge = newChallenge();
  const expected = await doorProof(nonce, port, challenge);
  const { request } = process.getBuiltinModule('node:http');
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: 'free' | 'ours' | 'foreign') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'GET',
        path: `${CHALLENGE_PATH}?c=${challenge}`,
        headers: { host: `127.0.0.1:${port}`, connection: 'close' },
        agent: false,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > 4_096) req.destroy();
          else chunks.push(c);
        });
        res.on('end', () => {
          let proof = '';
          try {
            proof = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { proof?: unknown }).proof ?? '');
          } catch {
            // not ours
          }
          done(res.statusCode === 200 && timingSafeEqualHex(proof, expected) ? 'ours' : 'foreign');
        });
        res.on('error', () => done('foreign'));
      },
    );
    const timer = setTimeout(() => {
      done('foreign');
      req.destroy();
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? 'free' : 'foreign'));
    req.end();
  });
}

function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
