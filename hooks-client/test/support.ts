// Test helpers: an in-memory Io, throwaway homes, and a fake cairn API on 127.0.0.1 that records requests.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Io } from '../src/io';

export interface MemIo extends Io {
  stdout: string;
  stderr: string;
}

export function memIo(opts: {
  env: Record<string, string | undefined>;
  cwd?: string;
  stdin?: string;
  now?: () => number;
}): MemIo {
  const io: MemIo = {
    env: opts.env,
    cwd: opts.cwd ?? opts.env.HOME ?? tmpdir(),
    readStdin: async () => opts.stdin ?? '',
    stdout: '',
    stderr: '',
    out: (t) => void (io.stdout += t),
    err: (t) => void (io.stderr += t),
    now: opts.now ?? (() => Date.now()),
    isTty: false,
  };
  return io;
}

export const tempDir = (prefix = 'cairn-test-') => mkdtempSync(join(tmpdir(), prefix));

/** A home directory with nothing in it, and the env that points cairn at it and at `url`. */
export function machine(
  url: string | null,
  token = 'tok-test',
): { home: string; env: Record<string, string | undefined> } {
  const home = tempDir('cairn-home-');
  const env: Record<string, string | undefined> = { HOME: home, PATH: process.env.PATH };
  if (url) {
    env.CAIRN_URL = url;
    env.CAIRN_TOKEN = token;
  }
  return { home, env };
}

export interface Captured {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: Record<string, unknown> | null;
}

export interface FakeServer {
  url: string;
  port: number;
  requests: Captured[];
  /** Event ids the fake has stored (repeats are acknowledged as duplicates, like the real server). */
  stored: Map<string, Record<string, unknown>>;
  /** Texts the recall routes answer with. */
  context: { index: string; file: string; prompt: string };
  /** Overrides: return a response to short-circuit, or undefined to fall through. */
  handler?: (req: Captured, res: ServerResponse) => boolean | void;
  batchSupported: boolean;
  close(): Promise<void>;
}

const INGEST: Record<string, string> = {
  '/api/sessions/init': 'init',
  '/api/sessions/observations': 'observation',
  '/api/sessions/summarize': 'summarize',
  '/api/sessions/end': 'end',
};

export async function fakeServer(port = 0): Promise<FakeServer> {
  const fake: FakeServer = {
    url: '',
    port: 0,
    requests: [],
    stored: new Map(),
    context: { index: '', file: '', prompt: '' },
    batchSupported: true,
    close: () => new Promise((r) => server.close(() => r())),
  };
  const store = (kind: string, body: Record<string, unknown>) => {
    const id = String(body.event_id);
    const duplicate = fake.stored.has(id);
    if (!duplicate) fake.stored.set(id, { kind, ...body });
    return { event_id: id, accepted: true, duplicate };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> | null = null;
      try {
        json = body ? (JSON.parse(body) as Record<string, unknown>) : null;
      } catch {
        json = null;
      }
      const url = new URL(req.url ?? '/', 'http://x');
      const captured: Captured = {
        method: req.method ?? 'GET',
        path: url.pathname + url.search,
        headers: req.headers,
        body,
        json,
      };
      fake.requests.push(captured);
      if (fake.handler?.(captured, res)) return;
      const send = (status: number, payload: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      };
      if (
        req.headers.authorization !== 'Bearer tok-test' &&
        url.pathname.startsWith('/api/') &&
        url.pathname !== '/api/health'
      ) {
        return send(401, { error: { code: 'invalid_token', message: 'This token is not valid.' } });
      }
      const kind = INGEST[url.pathname];
      if (kind && json) return send(202, store(kind, json));
      if (url.pathname === '/api/events/batch' && fake.batchSupported && json) {
        const events = (json.events as Array<Record<string, unknown>>) ?? [];
        return send(200, { results: events.map(({ kind: k, ...rest }) => store(String(k), rest)) });
      }
      if (url.pathname === '/api/context') return send(200, fake.context.index, 'text/plain');
      if (url.pathname === '/api/context/file') return send(200, fake.context.file, 'text/plain');
      if (url.pathname === '/api/context/prompt') return send(200, fake.context.prompt, 'text/plain');
      if (url.pathname === '/api/projects') return send(200, { projects: [] });
      if (url.pathname === '/api/health') return send(200, { status: 'ok' });
      send(404, { error: { code: 'not_found', message: 'No such route.' } });
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  fake.port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${fake.port}`;
  return fake;
}

/** A port nothing listens on (bound, then released). */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Claude Code's hook stdin for an event. */
export const hookJson = (fields: Record<string, unknown>) =>
  JSON.stringify({ session_id: 'sess-1', transcript_path: '/nonexistent.jsonl', cwd: '/tmp', ...fields });

/** A payload transcribed from another agent's source: test/fixtures/agents/<agent>.json (each names its source). */
export const agentFixture = (agent: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/agents/${agent}.json`, import.meta.url), 'utf8')) as Record<
    string,
    Record<string, unknown>
  >;

/** A machine logged in to a placeholder server, with an empty PATH (no agent CLI is found), for install tests. */
export function agentHome(url: string | null = 'https://cairn.example.dev') {
  const m = machine(url);
  m.env.PATH = tempDir('cairn-path-');
  return m;
}
