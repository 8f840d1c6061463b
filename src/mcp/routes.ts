// MCP endpoint (Streamable HTTP, stateless): a fresh server and transport per request, behind token auth.
import { Hono } from 'hono';
import { requireScope } from '../auth/middleware';
import type { AppEnv } from '../env';

/**
 * The MCP SDK (with its JSON-schema validator) is loaded on an isolate's first /mcp request, not when the
 * isolate starts: hooks and the viewer never need it.
 */
const loadMcp = () => Promise.all([import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'), import('./server')]);

export const mcpRoutes = new Hono<AppEnv>();

mcpRoutes.all('/mcp', requireScope('read'), async (c) => {
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
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw);
});
