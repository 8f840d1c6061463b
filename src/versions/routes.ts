// HTTP side of versions, mounted beside the corrections at /api/corrections (reads: `read` or `ingest`; writes:
// `ingest`, src/app.ts): a record's history, a diff between two of its versions, an edit, a revert.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv } from '../auth/types';
import { jsonBody, query } from '../lib/validate';
import { editRecord, EditBody, recordDiff, recordHistory, reindexRecord, revertRecord, RevertBody } from './service';
import type { Version } from './model';
import { renderDiff, renderHistory } from './render';

export const versionRoutes = new Hono<AppEnv>();

const Id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const VersionNumber = z.coerce.number().int().min(1).max(100_000);

/** A version as the API answers it: its time as ISO. */
export const versionJson = (v: Version) => ({ ...v, at: new Date(v.at).toISOString() });

const Format = z.enum(['json', 'text']).default('json');

versionRoutes.get('/history', query(z.object({ id: Id, format: Format })), async (c) => {
  const q = c.req.valid('query');
  const h = await recordHistory(c.env, c.get('auth'), q.id);
  if (q.format === 'text') return c.text(renderHistory(h));
  return c.json({ ...h, versions: h.versions.map(versionJson) });
});

versionRoutes.get(
  '/diff',
  query(z.object({ id: Id, from: VersionNumber, to: VersionNumber.optional(), format: Format })),
  async (c) => {
    const q = c.req.valid('query');
    const d = await recordDiff(c.env, c.get('auth'), q.id, q.from, q.to ?? null);
    return q.format === 'text' ? c.text(renderDiff(d)) : c.json(d);
  },
);

versionRoutes.post('/edit', jsonBody(EditBody, 100_000), async (c) => {
  const auth = c.get('auth');
  const done = await editRecord(c.env, auth, c.req.valid('json'), Date.now());
  if (done.changed.length) c.executionCtx.waitUntil(reindexRecord(c.env, auth.teamId, done.id));
  return c.json(done);
});

versionRoutes.post('/revert', jsonBody(RevertBody, 10_000), async (c) => {
  const auth = c.get('auth');
  const done = await revertRecord(c.env, auth, c.req.valid('json'), Date.now());
  if (done.changed.length) c.executionCtx.waitUntil(reindexRecord(c.env, auth.teamId, done.id));
  return c.json(done);
});
