// The sender's loopback door for Claude Code's HTTP hooks: PostToolUse (and PostToolUseFailure) POST their hook
// input here instead of starting a process per tool call. A request becomes an inbox entry exactly like the
// quick command hook's (inbox/quick.ts), so redaction, gate 0, pauses and the private-prompt check run in the
// one drain path (hook/drain.ts → handleHook) whichever way an event came in. Refused: anything but a POST of
// JSON to our path, with our Host, no browser Origin, and the machine's secret in x-cairn-nonce.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { closeDoor } from '../door/close';
import { CHALLENGE_PATH, doorProof, isChallenge, probeDoor } from '../door/proof';
import { nonceAccepted, readDoor, sameText, type DoorState } from '../door/state';
import type { Io } from '../io';
import { ENTRY_ENV_KEYS, entryName, formatEntry, INBOX_DIR, QUICK_EVENTS, type EntryHead } from '../inbox/entry';
import { writeEntryDurably } from '../inbox/quick';
import { ENV_HEADERS, HOOK_PATH, NONCE_HEADER } from '../hook-door';

/** Tool responses can be large (a whole file read); Claude Code caps them well below this. */
const MAX_BODY = 16_000_000;
/** Claude Code keeps one connection (a few for parallel calls); 1,000 half-open sockets held ~1,000 descriptors. */
export const MAX_CONNECTIONS = 32;
/** A connection that has not sent a whole request's headers by then is closed (half-open, slow headers). */
export const FIRST_REQUEST_MS = 5_000;
/** How long a sender whose port is in use waits for the listener there to prove it is cairn's. */
const PROBE_MS = 2_000;

export interface HookDoor {
  port: number;
  close(): Promise<void>;
}

/** Why there is no door: none configured, our own listener already there, or a listener that is not cairn's. */
export type NoDoor = { why: 'none' | 'ours' | 'taken'; detail?: string };

/**
 * Listens on 127.0.0.1 at the door's port (door.json, written by `cairn install`); `arrived` is called after each
 * entry is in the inbox. When the port is in use, the listener there must prove it is cairn's (door/proof.ts);
 * one that cannot closes the door (door/close.ts: command hooks again, the nonce retired) and is logged loudly.
 */
export async function openHookDoor(
  stateDir: string,
  env: Io['env'],
  arrived: () => void,
  log: (line: string) => void,
): Promise<HookDoor | NoDoor> {
  const door = readDoor(stateDir, env);
  if (!door || door.taken || (!door.settings.length && !door.legacy)) return { why: 'none' };
  const port = door.port;
  // Loaded here, by the sender only: a hook process never pays for node:http's server.
  const server: Server = process
    .getBuiltinModule('node:http')
    .createServer(
      { headersTimeout: 10_000, requestTimeout: 120_000, connectionsCheckingInterval: 1_000 },
      (req, res) => {
        clearTimeout(firstRequest.get(req.socket));
        void answer(req, res, { stateDir, env, port }).then(
          (wrote) => wrote && arrived(),
          (e: unknown) => {
            log(`hook request failed: ${e instanceof Error ? e.message : String(e)}`);
            reply(res, 500, 'inbox_unwritable', 'the event could not be written to the inbox');
          },
        );
      },
    );
  // Claude Code keeps its connection alive between tool calls. A server that closes an idle connection first
  // races the client's next POST on it ("other side closed": that call's hook fails), so the client should be
  // the one to close: idle connections are kept a minute, and closed at once when the sender leaves.
  server.keepAliveTimeout = 65_000;
  server.maxConnections = MAX_CONNECTIONS;
  const firstRequest = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    const t = setTimeout(() => socket.destroy(), FIRST_REQUEST_MS);
    firstRequest.set(socket, t);
    socket.once('close', () => clearTimeout(t));
  });
  const bound = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    server.listen(port, '127.0.0.1', () => resolve(null));
  });
  if (bound) {
    // Another sender of this account still holding it is fine; anything else may be another account's listener,
    // which would receive the hooks' POSTs (the nonce and the tool output): the door closes.
    const found = bound.code === 'EADDRINUSE' ? await probeDoor(port, door.nonce, PROBE_MS) : 'foreign';
    if (found === 'ours') return { why: 'ours' };
    const detail =
      bound.code === 'EADDRINUSE'
        ? `127.0.0.1:${port} is held by a listener that is not cairn's sender (it could not prove the door's secret)`
        : `127.0.0.1:${port} could not be opened (${bound.code ?? bound.message})`;
    closeDoor(stateDir, env, detail, Date.now());
    log(
      `HOOK DOOR CLOSED: ${detail}. Its hooks are command hooks again for new sessions, the secret it may have seen is retired; restart Claude Code, and run \`cairn install\` for a new port.`,
    );
    return { why: 'taken', detail };
  }
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
  o: { stateDir: string; env: Io['env']; port: number },
): Promise<boolean> {
  const url = req.url ?? '';
  // A web page can reach 127.0.0.1 too: browsers always send Origin on a cross-site request, and a rebound DNS
  // name arrives with its own Host. Claude Code sends neither.
  const host = header(req, 'host');
  if (header(req, 'origin') || (host !== `127.0.0.1:${o.port}` && host !== `localhost:${o.port}`))
    return (reply(res, 403, 'forbidden_origin', 'not a local hook'), drain(req));
  // Read for every request: `cairn install` re-issues the nonce while a sender runs.
  const door = readDoor(o.stateDir, o.env);
  if (!door || door.taken) return (reply(res, 503, 'door_closed', 'the hook door is closed'), drain(req));
  if (url.startsWith(`${CHALLENGE_PATH}?c=`)) return answerChallenge(req, res, door, o.port, url);
  const event = url.startsWith(HOOK_PATH) ? url.slice(HOOK_PATH.length) : '';
  if (!QUICK_EVENTS.includes(event))
    return (reply(res, 404, 'not_found', 'only /cairn/hook/post-tool-use and post-tool-use-failure'), drain(req));
  if (req.method !== 'POST') return (reply(res, 405, 'method_not_allowed', 'POST the hook input'), drain(req));
  const given = header(req, NONCE_HEADER);
  // The current nonce, or an earlier install's (checked against the session once the body is read).
  const known = sameText(given, door.nonce) || door.previous.some((p) => sameText(given, p.nonce));
  if (!known) return (reply(res, 401, 'bad_nonce', `${NONCE_HEADER} does not match this machine's sender`), drain(req));
  if (!/^application\/json\b/i.test(header(req, 'content-type')))
    return (reply(res, 415, 'not_json', 'the body must be application/json'), drain(req));
  const body = await readBody(req);
  if (body === null) return (reply(res, 413, 'too_large', `the body is over ${MAX_BODY} bytes`), false);
  let cwd: unknown;
  let session: unknown;
  try {
    const parsed: unknown = JSON.parse(body);
    const obj =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    cwd = obj.cwd;
    session = obj.session_id;
  } catch {
    return (reply(res, 400, 'bad_json', 'the body is not JSON'), false);
  }
  // An earlier install's nonce: only from a session that started with it, and only while it runs.
  if (!nonceAccepted(door, o.stateDir, given, typeof session === 'string' ? session : null, Date.now()))
    return (reply(res, 401, 'bad_nonce', `${NONCE_HEADER} is not this machine's sender's for this session`), false);
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

/** GET /cairn/door/challenge?c=<64 hex>: the proof that this listener holds the door's nonce (door/proof.ts). */
async function answerChallenge(
  req: IncomingMessage,
  res: ServerResponse,
  door: DoorState,
  port: number,
  url: string,
): Promise<false> {
  drain(req);
  const c = url.slice(`${CHALLENGE_PATH}?c=`.length);
  if (req.method !== 'GET' || !isChallenge(c)) return (reply(res, 400, 'bad_challenge', 'GET with c=<64 hex>'), false);
  const body = JSON.stringify({ proof: await doorProof(door.nonce, port, c) });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  return false;
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
