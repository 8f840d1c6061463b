// Export / import of a team's memory (admins): GET /api/admin/export[?project=KEY] streams NDJSON (with
// `cursor=start|<token>`: in bounded, resumable pieces, src/transfer/export-resume.ts),
// POST /api/admin/import takes it (in parts of at most 1 MB / 250 records) idempotently, as the caller's own rows:
// the part is parsed and planned at once (a refused line answers 4xx, nothing stored), then written in pieces while
// the request's budget lasts (src/transfer/import-write.ts): answered 200 with what it added when the whole part is
// stored (Workers Paid), else 202 with an `import` job that writes the rest (GET /api/jobs/:id follows it). The
// vectors follow in the team's `embed` job once the parts stop coming.
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
import { PLAN_SUBREQUESTS } from '../db/meter';
import { embedLater, pacer, requestPieces, writePieces, type Written } from './import-write';

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
    // Reads only: every line resolved by the write policy now, so a refused line stores nothing; each piece is
    // planned again when it is written.
    const planned = await checkPart(
      await writableTeamDbs(c.env, auth.teamId),
      { kind: 'member', caller: auth },
      records,
      Date.now(),
    );
    const caller = { teamId: auth.teamId, userId: auth.userId, handle: auth.handle };
    const at: Written = { next: 0, counts: noCounts() };
    await writePieces(
      {
        env: c.env,
        caller,
        lines: records,
        now: Date.now(),
        nextSize: requestPieces(PLAN_SUBREQUESTS[configOf(c.env).plan.name]),
        earlier: null,
        between: pacer(),
      },
      at,
    );
    if (at.next === records.length) {
      const embed = await embedLater(c.env, auth.teamId, at.counts, Date.now());
      return c.json({ records: records.length, imported: at.counts, ...(embed ? { embed_job: embed } : {}) });
    }
    // The rest is the job's: past the request's budget (Workers Free), or a team move closed the gate (the job
    // waits for its end).
    const job = await startJob(
      c.env,
      importJob,
      auth.teamId,
      { caller, lines: records, from: at.next, counts: at.counts },
      { userId: auth.userId, handle: auth.handle },
    );
    return c.json({ records: records.length, planned, imported: at.counts, job: wireJob(job) }, 202);
  });

const tooLarge = () =>
  new AppError(413, 'payload_too_large', `At most ${MAX_IMPORT_BYTES} bytes a request; send the file in parts.`);
