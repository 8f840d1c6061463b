// MCP endpoint (Streamable HTTP, stateless): a fresh server and transport per request, behind token auth.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { buildMcpServer } from './server';

/** Mounted at /mcp (scope `read`; write tools check `ingest` themselves). */
export const mcpRoutes = new Hono<AppEnv>();

mcpRoutes.all('/', async (c) => {
  const defer = (work: Promise<unknown>) => {
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      // No execution context (e.g. app.request in a unit test): let it finish on its own.
      work.catch(() => undefined);
    }
  };
  const server = buildMcpServer(c.env, c.get('auth'), { defer, now: Date.now });
  // A stateless transport serves exactly one request and a connected server cannot be reconnected.
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw);
});
