// GET /api/receipts (`cairn why`): which memories went into one of the caller's agent sessions, with the evidence
// each was sent with (docs/contracts.md, Receipts).
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { query } from '../lib/validate';
import { SessionKey } from './params';
import { receiptsFor } from './service';

/** Mounted at /api/receipts (scope `read`). */
export const receiptRoutes = new Hono<AppEnv>();

export const ReceiptsQuery = z.object({
  /** The agent's session id; absent: the session this device started last (in `project`, when given). */
  session: SessionKey.optional(),
  project: z.string().trim().min(1).max(500).optional(),
});
export type ReceiptsQuery = z.infer<typeof ReceiptsQuery>;

receiptRoutes.get('/', query(ReceiptsQuery, { blankIsAbsent: true }), async (c) => {
  const q = c.req.valid('query');
  return c.json(await receiptsFor(c.env, c.get('auth'), q));
});
