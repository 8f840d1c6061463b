// Ingest API: session events from the hooks client, answered at once and handed to the SessionDO.
import { Hono } from 'hono';
import type { AppEnv } from '../env';

export const ingestRoutes = new Hono<AppEnv>();
