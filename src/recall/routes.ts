// Recall API: context index, file context, prompt context, timeline, full records.
import { Hono } from 'hono';
import type { AppEnv } from '../env';

export const recallRoutes = new Hono<AppEnv>();
