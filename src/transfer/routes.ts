// Export / import of a team's memory (admins): GET /api/admin/export[?project=KEY] streams NDJSON,
// POST /api/admin/import takes it (in parts of at most 1 MB / 250 records) idempotently, as the caller's own rows.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { AppError } from '../lib/errors';
import { indexRecords } from '../vectors/index-records';
import { exportProjects, exportRecords, ndjsonStream, readerFilter } from './export';
import { writableTeamDbs } from '../slots/enter-write';
import { importPart, MAX_IMPORT_BYTES, parseNdjson } from './import';
import { teamDb } from '../db/shards';

export const transferRoutes = new Hono<AppEnv>()
  .get('/export', async (c) => {
    const auth = c.get('auth');
    const key = c.req.query('project');
    const db = await teamDb(c.env, auth.teamId);
    const ids = await exportProjects(db, auth, key === undefined || key.trim() === '' ? null : key.trim());
    return new Response(ndjsonStream(exportRecords(db, auth.teamId, ids, readerFilter(auth))), {
      headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-disposition': 'attachment; filename="cairn-export.ndjson"' },
    });
  })
  .post('/import', async (c) => {
    const declared = Number(c.req.header('content-length') ?? '0');
    if (declared > MAX_IMPORT_BYTES) throw tooLarge();
    const buf = await c.req.arrayBuffer();
    if (buf.byteLength > MAX_IMPORT_BYTES) throw tooLarge();
    let body: string;
    try {
      body = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf);
    } catch {
      throw new AppError(400, 'malformed_body', 'The body is not UTF-8 text.');
    }
    const records = parseNdjson(body);
    const auth = c.get('auth');
    const { counts, ids } = await importPart(await writableTeamDbs(c.env, auth.teamId), { kind: 'member', caller: auth }, records, Date.now());
    // Vectors for search: off the answer's path; the backfill catches any that fail.
    if (ids.observations.length + ids.summaries.length + ids.prompts.length) c.executionCtx.waitUntil(indexRecords(c.env, auth.teamId, ids).then(() => undefined));
    return c.json({ records: records.length, imported: counts });
  });

const tooLarge = () => new AppError(413, 'payload_too_large', `At most ${MAX_IMPORT_BYTES} bytes a request; send the file in parts.`);
