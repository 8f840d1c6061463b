// A person's own memory (issue 36): `cairn remember [--personal]` writes through here (the MCP `remember` tool is the
// agent's way in), and `cairn export --personal` reads its owner's export. Personal notes live in the owner's private
// project `#personal/<handle>` (src/db/write-policy.ts), so the one visibility rule keeps them from everyone else;
// the team export and the admin views leave that project out (admins see counts: GET /api/admin/users).
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { personalProjectOf } from '../db/projects';
import { teamDb } from '../db/shards';
import { jsonBody } from '../lib/validate';
import { remember, RememberInput } from '../recall/memory-writes';
import { ndjsonStream, readerFilter } from '../transfer/export';
import { exportRecords } from '../transfer/export-cursor';
import type { ExportRecord } from '../transfer/records';
import { indexObservations } from '../vectors/index-records';

/** Mounted at /api/memory (reads: `read` or `ingest`; writes: `ingest`, declared in src/app.ts). */
export const memoryRoutes = new Hono<AppEnv>();

memoryRoutes.post('/remember', jsonBody(RememberInput, 64_000), async (c) => {
  const auth = c.get('auth');
  const saved = await remember(c.env, auth, c.req.valid('json'), Date.now());
  if (!saved.duplicate) c.executionCtx.waitUntil(indexObservations(c.env, auth.teamId, [saved.id]));
  return c.json(
    {
      id: saved.id,
      scope: saved.scope,
      project: saved.scope === 'personal' ? null : saved.project,
      duplicate: saved.duplicate,
      superseded: saved.superseded,
    },
    saved.duplicate ? 200 : 201,
  );
});

/**
 * The caller's personal memory as the export's NDJSON (the same records as GET /api/admin/export: their project, its
 * sessions and notes, the notes' history), and no one else's rows: only the caller's own `user` line is kept.
 */
memoryRoutes.get('/personal/export', async (c) => {
  const auth = c.get('auth');
  const d = await teamDb(c.env, auth.teamId);
  const own = await personalProjectOf(d, auth);
  async function* records(): AsyncGenerator<ExportRecord> {
    if (!own) return;
    for await (const r of exportRecords(d, auth.teamId, [own.id], readerFilter(auth))) {
      if (r.kind === 'user' && r.handle !== auth.handle) continue;
      yield r;
    }
  }
  return new Response(ndjsonStream(records()), {
    headers: {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'content-disposition': 'attachment; filename="cairn-personal.ndjson"',
    },
  });
});
