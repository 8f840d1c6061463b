// One HTTP call with a hard deadline. Plain http (the usual 127.0.0.1 / LAN case) is spoken directly over
// node:net, which loads in a fraction of node:http's time; https goes through node:https, loaded on demand.
import type { Agent } from 'node:http';
import { connect } from 'node:net';
import { killPoint } from '../util/kill-point';
import { VERSION } from '../version';
import { parseResponse, type HttpResult } from './http1';

export type { HttpResult } from './http1';

export interface CallOptions {
  method?: 'GET' | 'POST' | 'HEAD';
  token?: string | null;
  device?: string | null;
  body?: unknown;
  timeoutMs: number;
  /** Longest answer read; the rest is dropped (context texts are small, a runaway server is not). */
  maxBytes?: number;
  /**
   * Reuse one connection across calls (the background sender, which sends many small requests): node:http(s)
   * with a keep-alive agent. A hook process makes one or two calls and exits, so it speaks plain node:net.
   */
  keepAlive?: boolean;
}

/** Thrown when the server could not be reached or did not answer in time (the event is worth retrying). */
export class Unreachable extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'Unreachable';
  }
}

const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export async function call(baseUrl: string, path: string, opts: CallOptions): Promise<HttpResult> {
  const url = new URL(path, `${baseUrl}/`);
  const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const headers: Record<string, string> = { 'user-agent': `cairn-client/${VERSION}`, accept: '*/*' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.device) headers['x-cairn-device'] = opts.device;
  if (body) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.length);
  }
  // A CR or LF in a configured token or device name would split the request: refuse, like node:http does.
  for (const [k, v] of Object.entries(headers))
    if (!HEADER_VALUE.test(v)) throw new Error(`invalid character in the ${k} header (check the config)`);
  const method = opts.method ?? (body ? 'POST' : 'GET');
  if (opts.timeoutMs <= 0) throw new Unreachable('no time left');
  const maxBytes = opts.maxBytes ?? 2_000_000;
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Unreachable(`unsupported protocol ${url.protocol}`);
  if (url.protocol === 'https:' || opts.keepAlive)
    return viaNodeHttp(url, method, headers, body, opts.timeoutMs, maxBytes, opts.keepAlive ?? false);
  return viaSocket(url, method, headers, body, opts.timeoutMs, maxBytes);
}

function viaSocket(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs: number,
  maxBytes: number,
): Promise<HttpResult> {
  const head =
    `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: close\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return new Promise<HttpResult>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      fn();
    };
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || 80 });
    const timer = setTimeout(
      () => finish(() => reject(new Unreachable(`no answer within ${timeoutMs} ms`))),
      timeoutMs,
    );
    // Answer as soon as the response is complete: a server may keep the socket open a little longer.
    const tryParse = (ended: boolean) => {
      const r = parseResponse(Buffer.concat(chunks), { ended, maxBytes, head: method === 'HEAD' });
      if (r === 'incomplete') {
        if (ended) finish(() => reject(new Unreachable('connection closed before a complete answer')));
      } else if (r === 'malformed') finish(() => reject(new Unreachable('malformed HTTP answer')));
      else finish(() => resolve(r));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (e: NodeJS.ErrnoException) => finish(() => reject(new Unreachable(e.code ?? e.message))));
    socket.write(head);
    if (body) socket.write(body);
    killPoint('request-written');
  });
}

/** One keep-alive agent per protocol, made on first use (a single connection: the sender sends in order). */
const agents = new Map<string, Agent>();
// Loaded on first use only (process.getBuiltinModule, like every builtin of the client): hooks rarely need them.
const httpModule = (protocol: string) =>
  protocol === 'https:' ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');

function agentFor(protocol: string): Agent {
  let agent = agents.get(protocol);
  if (!agent) {
    agent = new (httpModule(protocol).Agent)({ keepAlive: true, maxSockets: 1, keepAliveMsecs: 10_000 });
    agents.set(protocol, agent);
  }
  return agent;
}

async function viaNodeHttp(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs: number,
  maxBytes: number,
  keepAlive: boolean,
): Promise<HttpResult> {
  const { request } = httpModule(url.protocol);
  const agent = keepAlive ? agentFor(url.protocol) : false;
  return new Promise<HttpResult>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
    };
    const req = request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= maxBytes) chunks.push(c);
      });
      res.on('end', () =>
        finish(() =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        ),
      );
      res.on('error', (e) => finish(() => reject(new Unreachable(e.message))));
    });
    const timer = setTimeout(() => {
      finish(() => reject(new Unreachable(`no answer within ${timeoutMs} ms`)));
      req.destroy();
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => finish(() => reject(new Unreachable(e.code ?? e.message))));
    if (body) req.end(body);
    else req.end();
  });
}

/** Reads the `{error:{code,message}}` body the API answers with, for messages shown to the user. */
export function errorText(r: HttpResult): string {
  try {
    const e = (JSON.parse(r.text) as { error?: { code?: string; message?: string } }).error;
    if (e?.code) return `${r.status} ${e.code}: ${e.message ?? ''}`.trim();
  } catch {
    // not JSON
  }
  return `HTTP ${r.status}`;
}
