// Serves the bundled hooks client so a new machine needs only Node and the URL.
import { Hono } from 'hono';
import type { AppEnv } from '../env';

export const installRoutes = new Hono<AppEnv>();
