// Export / import of a team's memory (admins): GET /api/admin/export[?project=KEY] streams NDJSON (with
// `cursor=start|<token>`: in bounded, resumable pieces, src/transfer/export-resume.ts),
// POST /api/admin/import takes it (in parts of at most 1 MB / 250 records) idempotently, as the caller's own rows:
// the part is parsed and planned at once (a refused line answers 4xx, nothing stored) and written and embedded by
// an `import` job (src/transfer/import-job.ts), answered 202 with its id (GET /api/jobs/:id follows it).
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { AppError } from '../lib/errors';
import { startJob, wireJob } from '../jobs/start';
import { configOf } from '../config';
import { exportProjects, ndjsonStream, readerFilter } from './export';
import { exportPager, exportRecords } from './export-cursor';
import { parseCursorToken, resumableExport } from './export-resume';
import { writableTeamDbs } from '../slots/enter-write';
import { checkPart, MAX_IMPORT_BYTES, parseNdjson } from './import';
import { importJob } from './import-job';
import { teamDb } from '../db/shards';
import { noCounts } from './import-plan';

export const transferRoutes = new Hono<AppEnv>()
  .get('/export', async (c) => {
    const auth = c.get('auth');
    const key = c.req.query('project');
    const db = await teamDb(c.env, auth.teamId);
    const token = c.req.query('cursor');
    // A bad cursor is refused before anything is read.
    const from = token === undefined ? null : parseCursorToken(token);
    const ids = await exportProjects(db, auth, key === undefined || key.trim() === '' ? null : key.trim());
    const body =
      from === null
        ? ndjsonStream(exportRecords(db, auth.teamId, ids, readerFilter(auth)))
        : resumableExport(
            exportPager(db, auth.teamId, readerFilter(auth), ids),
            from,
            configOf(c.env).jobStep.statements,
          );
    return new Response(body, {
      headers: {
        'content-type': 'application/x-ndjson; charset=utf-8',
        'content-disposition': 'attachment; filename="cairn-export.ndjson"',
      },
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
    if (records.length === 0) return c.json({ records: 0, imported: noCounts() });
    // Reads only: every line resolved by the write policy now; the job plans each piece again when it writes it.
    const planned = await checkPart(
      await writableTeamDbs(c.env, auth.teamId),
      { kind: 'member', caller: auth },
      records,
      Date.now(),
    );
    const caller = { teamId: auth.teamId, userId: auth.userId, handle: auth.handle };
    const job = await startJob(
      c.env,
      importJob,
      auth.teamId,
      { caller, lines: records },
      { userId: auth.userId, handle: auth.handle },
    );
    return c.json({ records: records.length, planned, job: wireJob(job) }, 202);
  });

const tooLarge = () =>
  new AppError(413, 'payload_too_large', `At most ${MAX_IMPORT_BYTES} bytes a request; send the file in parts.`);
