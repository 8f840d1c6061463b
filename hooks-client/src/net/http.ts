// One HTTP call with a hard deadline, over node:http(s) (lighter to load than fetch on every hook start).
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { VERSION } from '../version';

export interface HttpResult {
  status: number;
  text: string;
  headers: IncomingMessage['headers'];
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'HEAD';
  token?: string | null;
  device?: string | null;
  body?: unknown;
  timeoutMs: number;
  /** Longest answer read; the rest is dropped (context texts are small, a runaway server is not). */
  maxBytes?: number;
}

/** Thrown when the server could not be reached or did not answer in time (the event is worth retrying). */
export class Unreachable extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'Unreachable';
  }
}

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
  const options: RequestOptions = { method: opts.method ?? (body ? 'POST' : 'GET'), headers, agent: false };
  const requestFn = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  if (opts.timeoutMs <= 0) throw new Unreachable('no time left');
  return new Promise<HttpResult>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
    };
    const req = requestFn(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= (opts.maxBytes ?? 2_000_000)) chunks.push(c);
      });
      res.on('end', () => finish(() => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers })));
      res.on('error', (e) => finish(() => reject(new Unreachable(e.message))));
    });
    const timer = setTimeout(() => {
      finish(() => reject(new Unreachable(`no answer within ${opts.timeoutMs} ms`)));
      req.destroy();
    }, opts.timeoutMs);
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
