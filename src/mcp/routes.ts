// MCP endpoint (Streamable HTTP, stateless): a fresh server and transport per request, behind token auth.
// Only POST carries messages: a stateless server has no stream to offer on GET and no session to DELETE.
import { Hono } from 'hono';
import type { Context } from 'hono';
import type { AppEnv } from '../auth/types';
import { AppError } from '../lib/errors';
import { assertJsonShape } from '../lib/json-limits';
import { limiterStub } from '../limits/limiter-do';
import { limitFor } from '../limits/rate-limit';
import { errorText, log } from '../lib/log';

/**
 * The MCP SDK (with its JSON-schema validator) is loaded on an isolate's first /mcp request, not when the
 * isolate starts: hooks and the viewer never need it.
 */
const loadMcp = () =>
  Promise.all([import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('./server')]);

/** Mounted at /mcp (scope `read`; write tools check `ingest` themselves). */
export const mcpRoutes = new Hono<AppEnv>();

export const MAX_BATCH_MESSAGES = 10;

/**
 * A browser page of another site must not reach the endpoint (DNS rebinding, a token pasted into a page):
 * an Origin header, when sent, must be this server's own. CLI clients send none and are let through.
 */
export function checkOrigin(origin: string | undefined, requestUrl: string): void {
  if (origin === undefined) return;
  let own: string;
  try {
    own = new URL(requestUrl).origin;
  } catch {
    own = '';
  }
  if (origin !== own)
    throw new AppError(403, 'origin_not_allowed', 'Requests from a web page of another origin are refused.');
}

/** JSON-RPC requests (not notifications or responses) in one POST body: each is a unit of rate-limited work. */
export function countCalls(message: unknown): number {
  const list = Array.isArray(message) ? message : [message];
  return list.filter((m) => m !== null && typeof m === 'object' && 'method' in m && 'id' in m).length;
}

/** The middleware charged the HTTP request as one call; a batch of n calls is charged the other n - 1 here. */
async function chargeExtraCalls(c: Context<AppEnv>, calls: number): Promise<void> {
  if (calls <= 1) return;
  const auth = c.get('auth');
  const limit = limitFor(c.env, auth, 'read');
  let verdict;
  try {
    verdict = await limiterStub(c.env, auth.tokenId).hit('read', limit, Date.now(), calls - 1);
  } catch (err) {
    log('error', 'rate limiter unavailable', { message: errorText(err) });
    return;
  }
  c.header('x-ratelimit-limit', String(verdict.limit));
  c.header('x-ratelimit-remaining', String(verdict.remaining));
  if (!verdict.allowed) {
    const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    throw new AppError(
      429,
      'rate_limited',
      `This batch holds ${calls} calls, more than this token may still make; retry in ${seconds}s.`,
      {
        'retry-after': String(seconds),
      },
    );
  }
}

const methodNotAllowed = (c: Context<AppEnv>) => {
  c.header('allow', 'POST');
  return c.json(
    {
      error: { code: 'method_not_allowed', message: 'This MCP server is stateless: send JSON-RPC messages with POST.' },
    },
    405,
  );
};

mcpRoutes.on(['GET', 'DELETE', 'PUT', 'PATCH'], '/', methodNotAllowed);

mcpRoutes.post('/', async (c) => {
  checkOrigin(c.req.header('origin'), c.req.url);
  const body = await c.req.text();
  assertJsonShape(body);
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new AppError(400, 'malformed_json', 'The request body is not valid JSON.');
  }
  // MCP 2025-06-18 dropped JSON-RPC batching; older clients may still batch, but a few calls at a time: a
  // batch of 100 searches held the isolate for seconds while everyone else waited.
  if (Array.isArray(message) && message.length > MAX_BATCH_MESSAGES) {
    throw new AppError(400, 'batch_too_large', `A JSON-RPC batch may hold at most ${MAX_BATCH_MESSAGES} messages.`);
  }
  await chargeExtraCalls(c, countCalls(message));
  const defer = (work: Promise<unknown>) => {
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      // No execution context (e.g. app.request in a unit test): let it finish on its own.
      work.catch(() => undefined);
    }
  };
  const [{ WebStandardStreamableHTTPServerTransport }, { buildMcpServer }] = await loadMcp();
  const server = buildMcpServer(c.env, c.get('auth'), { defer, now: Date.now });
  // A stateless transport serves exactly one request and a connected server cannot be reconnected.
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  const answer = await transport.handleRequest(c.req.raw, { parsedBody: message });
  // The SDK builds its own Response; carry over what the middleware set (rate-limit headers).
  const out = new Response(answer.body, answer);
  for (const [name, value] of c.res.headers)
    if (name !== 'content-type' && !out.headers.has(name)) out.headers.set(name, value);
  return out;
});
