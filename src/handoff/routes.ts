// Continue anywhere over HTTP (issue 36): GET /api/handoff (scope `read` or `ingest`) answers a session's handoff,
// as JSON or as the block the next SessionStart injects; POST /api/handoff/note (scope `ingest`) writes a handoff
// note into the caller's own session. `cairn continue`, `cairn handoff` and the MCP tool continue_session use these.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { jsonBody, query } from '../lib/validate';
import { ContextQuery } from '../recall/params';
import { HANDOFF_MAX_CHARS } from './render';
import { handoffFor, HandoffNoteBody, writeHandoffNote } from './service';

const checkout = ContextQuery.pick({ branch: true, head: true, history: true, tz: true });

export const HandoffQuery = checkout
  .extend({
    session: z.string().trim().min(1).max(200).optional(),
    last: z.enum(['1', 'true']).optional(),
    project: z.string().trim().min(1).max(500).optional(),
    format: z.enum(['json', 'text']).optional(),
    max_chars: z.coerce.number().int().min(500).max(9_500).optional(),
  })
  .refine((q) => (q.session ? !q.last : q.last && q.project), {
    message: 'give session=<id>, or last=1 with project=<key>',
  });
export type HandoffQuery = z.infer<typeof HandoffQuery>;

/** Mounted at /api/handoff (reads: `read` or `ingest`; the note: `ingest`, declared in src/app.ts). */
export const handoffRoutes = new Hono<AppEnv>();

handoffRoutes.get('/', query(HandoffQuery), async (c) => {
  const q = c.req.valid('query');
  const h = await handoffFor(c.env, c.get('auth'), {
    session: q.session,
    last: q.last !== undefined,
    project: q.project,
    checkout:
      q.branch || q.head || q.history.length
        ? { branch: q.branch ?? null, head: q.head ?? null, trunk: null, history: q.history }
        : null,
    timeZone: q.tz,
    maxChars: q.max_chars ?? HANDOFF_MAX_CHARS,
    now: Date.now(),
  });
  return q.format === 'text' ? c.text(h.text) : c.json(h);
});

handoffRoutes.post('/note', jsonBody(HandoffNoteBody, 32_000), async (c) => {
  const saved = await writeHandoffNote(c.env, c.get('auth'), c.req.valid('json'), Date.now());
  return c.json(saved, saved.duplicate ? 200 : 201);
});
