// MCP endpoint (Streamable HTTP, stateless) with the recall tools.
import { Hono } from 'hono';
import type { AppEnv } from '../env';

export const mcpRoutes = new Hono<AppEnv>();
