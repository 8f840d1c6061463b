// The sender's loopback door for Claude Code's HTTP hooks: PostToolUse (and PostToolUseFailure) POST their hook
// input here instead of starting a process per tool call. A request becomes an inbox entry exactly like the
// quick command hook's (inbox/quick.ts), so redaction, gate 0, pauses and the private-prompt check run in the
// one drain path (hook/drain.ts → handleHook) whichever way an event came in. Refused: anything but a POST of
// JSON to our path, with our Host, no browser Origin, and the machine's secret in x-cairn-nonce.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ENTRY_ENV_KEYS, entryName, formatEntry, INBOX_DIR, QUICK_EVENTS, type EntryHead } from '../inbox/entry';
import { writeEntryDurably } from '../inbox/quick';
import { ensurePrivateDir, PRIVATE_FILE, safeWriteFile } from '../util/safe-write';
import { ENV_HEADERS, HOOK_PATH, NONCE_HEADER } from '../hook-door';

const NONCE_FILE = 'sender.nonce';
/** Tool responses can be large (a whole file read); Claude Code caps them well below this. */
const MAX_BODY = 16_000_000;

/** This machine's secret (state dir, owner-only), made on first use. */
export function senderNonce(stateDir: string): string {
  const file = join(stateDir, NONCE_FILE);
  try {
    const v = readFileSync(file, 'utf8').trim();
    if (/^[A-Za-z0-9_-]{32,}$/.test(v)) return v;
  } catch {
    // none yet
  }
  ensurePrivateDir(stateDir);
  // Web Crypto (a global): node:crypto is never loaded by the client.
  const v = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(24))).toString('base64url');
  safeWriteFile(file, `${v}\n`, { mode: PRIVATE_FILE, exactMode: true });
  return v;
}

export interface HookDoor {
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port`; `arrived` is called after each entry is in the inbox. Null when the port is taken. */
export async function openHookDoor(
  stateDir: string,
  port: number,
  arrived: () => void,
  log: (line: string) => void,
): Promise<HookDoor | null> {
  const nonce = Buffer.from(senderNonce(stateDir));
  // Loaded here, by the sender only: a hook process never pays for node:http's server.
  const server: Server = process.getBuiltinModule('node:http').createServer((req, res) => {
    void answer(req, res, { stateDir, port, nonce }).then(
      (wrote) => wrote && arrived(),
      (e: unknown) => {
        log(`hook request failed: ${e instanceof Error ? e.message : String(e)}`);
        reply(res, 500, 'inbox_unwritable', 'the event could not be written to the inbox');
      },
    );
  });
  // Claude Code keeps its connection alive between tool calls. A server that closes an idle connection first
  // races the client's next POST on it ("other side closed": that call's hook fails), so the client should be
  // the one to close: idle connections are kept a minute, and closed at once when the sender leaves.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      log(
        `no HTTP hook door on 127.0.0.1:${port} (${e.code ?? e.message}); hooks fall back to Stop's transcript reconciliation`,
      );
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!bound) return null;
  server.on('error', (e) => log(`HTTP hook door: ${e.message}`));
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function reply(res: ServerResponse, status: number, code?: string, message?: string): void {
  if (res.headersSent) return;
  const body = code ? JSON.stringify({ error: code, message }) : '';
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const header = (req: IncomingMessage, name: string): string => {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

/** One request; true when an entry was written. Every refusal is a 4xx with a stable code. */
async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  o: { stateDir: string; port: number; nonce: Buffer },
): Promise<boolean> {
  const url = req.url ?? '';
  const event = url.startsWith(HOOK_PATH) ? url.slice(HOOK_PATH.length) : '';
  if (!QUICK_EVENTS.includes(event))
    return (reply(res, 404, 'not_found', 'only /cairn/hook/post-tool-use and post-tool-use-failure'), drain(req));
  if (req.method !== 'POST') return (reply(res, 405, 'method_not_allowed', 'POST the hook input'), drain(req));
  // A web page can reach 127.0.0.1 too: browsers always send Origin on a cross-site POST, and a rebound DNS
  // name arrives with its own Host. Claude Code sends neither.
  const host = header(req, 'host');
  if (header(req, 'origin') || (host !== `127.0.0.1:${o.port}` && host !== `localhost:${o.port}`))
    return (reply(res, 403, 'forbidden_origin', 'not a local hook'), drain(req));
  const given = Buffer.from(header(req, NONCE_HEADER));
  if (!sameBytes(given, o.nonce))
    return (reply(res, 401, 'bad_nonce', `${NONCE_HEADER} does not match this machine's sender`), drain(req));
  if (!/^application\/json\b/i.test(header(req, 'content-type')))
    return (reply(res, 415, 'not_json', 'the body must be application/json'), drain(req));
  const body = await readBody(req);
  if (body === null) return (reply(res, 413, 'too_large', `the body is over ${MAX_BODY} bytes`), false);
  let cwd: unknown;
  try {
    const parsed: unknown = JSON.parse(body);
    cwd =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { cwd?: unknown }).cwd : undefined;
  } catch {
    return (reply(res, 400, 'bad_json', 'the body is not JSON'), false);
  }
  if (typeof cwd !== 'string' || !cwd) return (reply(res, 400, 'missing_cwd', 'the hook input has no cwd'), false);
  // cairn's own traffic (an observer or import running Claude): the command hook would skip it too.
  if (header(req, 'x-cairn-internal') === '1') return (reply(res, 200), false);
  const head: EntryHead = { v: 1, at: Date.now(), event, agent: 'claude-code', cwd };
  for (const [k, h] of Object.entries(ENV_HEADERS) as Array<[(typeof ENTRY_ENV_KEYS)[number], string]>) {
    const v = header(req, h);
    if (v) (head.env ??= {})[k] = v;
  }
  writeEntryDurably(
    join(o.stateDir, INBOX_DIR),
    entryName(head.at, process.pid, nextSeq()),
    formatEntry({ head, stdin: body }),
  );
  reply(res, 200);
  return true;
}

/** Constant-time comparison (its time depends on the length only, which is not the secret). */
function sameBytes(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

let seq = 0;
/** The quick hook's names carry its pid; here one process writes many entries, so a counter keeps them apart. */
const nextSeq = () => ++seq;

/** Reads a refused request's body away so the kept-alive connection stays usable. */
function drain(req: IncomingMessage): false {
  req.resume();
  return false;
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) {
      req.resume();
      return null;
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
