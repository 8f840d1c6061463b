// Is the listener on the door's port cairn's own? Whoever asks sends a fresh random challenge; cairn's door
// answers HMAC-SHA256(nonce, "cairn-door-v1 <port> <challenge>"). A squatter learns nothing usable from this:
// the challenge is random and carries no secret, the nonce never crosses the wire in either direction, and an
// answer it might get from the real door (when the real one holds the port, the squatter cannot) is for a
// challenge no client will send again.

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
 * (`foreign`: a listener that does not answer within `timeoutMs`, answers wrongly or is not HTTP). One HTTP/1.1
 * request over node:net, which hooks load anyway (node:http stays the sender's).
 */
export async function probeDoor(port: number, nonce: string, timeoutMs: number): Promise<'free' | 'ours' | 'foreign'> {
  const challenge = newChallenge();
  const expected = await doorProof(nonce, port, challenge);
  const { connect } = process.getBuiltinModule('node:net');
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let size = 0;
    const socket = connect(port, '127.0.0.1');
    const done = (v: 'free' | 'ours' | 'foreign') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done('foreign'), timeoutMs);
    socket.on('connect', () =>
      socket.write(
        `GET ${CHALLENGE_PATH}?c=${challenge} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      ),
    );
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 4_096) return done('foreign');
      chunks.push(c);
    });
    socket.on('end', () => done(proofIn(Buffer.concat(chunks).toString('utf8'), expected) ? 'ours' : 'foreign'));
    socket.on('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? 'free' : 'foreign'));
  });
}

/** Whether an HTTP answer is a 200 whose JSON body holds the expected proof. */
function proofIn(answer: string, expected: string): boolean {
  const split = answer.indexOf('\r\n\r\n');
  if (split < 0 || !/^HTTP\/1\.[01] 200 /.test(answer)) return false;
  try {
    const proof = (JSON.parse(answer.slice(split + 4)) as { proof?: unknown }).proof;
    return typeof proof === 'string' && timingSafeEqualHex(proof, expected);
  } catch {
    return false;
  }
}

function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
