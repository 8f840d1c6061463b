// The scale run (slow tier): every whole-team job on one team of 100,000 observations over 200 projects (seeded
// once for the file by bounded inserts, fixture.ts), under the statement meter (limits.ts fails any invocation
// past 1,000 statements; here every step must also keep within the 200-statement step budget). Prints, per job,
// steps, statements and time per step (max and typical) and the bulk data a step held, and the forget-to-gone
// bound: from the forget request to the project's rows gone from every table and FTS segment. BENCHMARKS.md
// ("Jobs at scale") holds the numbers of a run. Jobs that take thousands of steps (the backfill, the move) run a
// fixed number of steps here and are projected from their per-step figures; the move runs whole on a team of
// MOVE_PROJECTS projects seeded the same way.
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { watchInvocations, type Usage } from '../../../src/db/meter';
import { jobRecord, type JobRecord } from '../../../src/jobs/job-do';
import { startJob } from '../../../src/jobs/start';
import { consolidateJob } from '../../../src/consolidation/job';
import { retentionSweepJob } from '../../../src/retention/sweep-job';
import { ftsUpkeepJob } from '../../../src/search/fts-upkeep';
import { embedJob } from '../../../src/vectors/embed-job';
import { startUpgradeIfBehind } from '../../../src/upgrade/check';
import { ADMIN_SECRET, call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { finishJob, lane, runJob } from '../support/jobs';
import { importNow } from '../support/import';
import { pieceCost } from '../../../src/transfer/import-write';
import { idsOf, type Ids } from '../support/seed';
import { projectTraces, seedScale, STEP_MS, T0, type Fixture } from './fixture';

const PROJECTS = 200;
const PER_PROJECT = 500;
/** Steps the backfill runs here (of ~3,000 for 300k texts); the rest is projected. */
const BACKFILL_STEPS = 12;
const MOVE_PROJECTS = 20;

interface Line {
  job: string;
  size: string;
  steps: number;
  stmtMax: number;
  stmtTypical: number;
  msMax: number;
  msTypical: number;
  heldMax: number;
  wallMs: number;
  note: string;
}
const lines: Line[] = [];
const budget = () => configOf(env).jobStep.statements;

/** Median of what each step's invocation sent (the meter's own count), by label. */
let usages: Usage[] = [];
const unwatch = watchInvocations((u) => usages.push(u));
const median = (xs: number[]) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

function record(job: string, size: string, j: JobRecord, wallMs: number, note = ''): void {
  // Steps that only waited (a move's settle time, polled here back to back) send nothing: they are not counted.
  const steps = usages.filter((u) => u.label === `job ${j.kind}` && u.statements > 0).map((u) => u.statements);
  const s = j.stats;
  lines.push({
    job,
    size,
    steps: steps.length || s.steps,
    stmtMax: s.statements.max,
    stmtTypical: median(steps),
    msMax: s.ms.max,
    msTypical: Math.round(s.ms.total / Math.max(1, s.steps)),
    heldMax: s.held.max,
    wallMs,
    note,
  });
  expect(s.statements.max, `${job}: statements in one step`).toBeLessThanOrEqual(budget());
}

async function timed<T>(fn: () => Promise<T>): Promise<{ out: T; ms: number }> {
  usages = [];
  const t = Date.now();
  const out = await fn();
  return { out, ms: Date.now() - t };
}

let id: TestIdentity;
let ids: Ids;
let fx: Fixture;

beforeAll(async () => {
  // A fresh database is at data version 0, and the upgrade (src/upgrade/) would start the fixture team's embed
  // job for its 100k unembedded rows and its judge-held job: the jobs measured below would share the team's lane
  // with them (the backfill's start then answered the upgrade's embed job, 68 steps in). The fixture stands for a
  // team on a current install, so the upgrade runs to its end first, while the database holds no team.
  const upgrade = await startUpgradeIfBehind(env);
  if (upgrade) expect((await runJob(null, upgrade)).status).toBe('done');
  id = await newIdentity();
  ids = await idsOf(id);
  fx = await seedScale(ids, fresh('scale'), PROJECTS, PER_PROJECT);
  console.log(`scale fixture: ${JSON.stringify(fx.rows)} in ${(fx.ms / 1000).toFixed(1)} s`);
}, 1_800_000);

afterAll(() => {
  unwatch();
  const kb = (b: number) => (b === 0 ? '0' : `${(b / 1024).toFixed(0)} KB`);
  const table = [
    '| job | on | steps | statements/step max | typical | ms/step max | typical | held max | wall | note |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...lines.map(
      (l) =>
        `| ${l.job} | ${l.size} | ${l.steps} | ${l.stmtMax} | ${l.stmtTypical} | ${l.msMax} | ${l.msTypical} | ${kb(l.heldMax)} | ${(l.wallMs / 1000).toFixed(1)} s | ${l.note} |`,
    ),
  ];
  console.log(
    `\nJobs at scale (${fx?.rows.observations ?? 0} observations, ${PROJECTS} projects; step budget ${budget()} statements)\n${table.join('\n')}\n`,
  );
});

describe('every whole-team job on 100k observations over 200 projects', { timeout: 1_800_000 }, () => {
  it('has the fixture it claims', () => {
    expect(fx.rows.observations).toBe(PROJECTS * PER_PROJECT);
    expect(fx.projectIds).toHaveLength(PROJECTS);
  });

  it('merges the FTS indexes the seeding left in many segments, a bounded merge at a time', async () => {
    const { out: j, ms } = await timed(async () =>
      runJob(null, (await startJob(env, ftsUpkeepJob, null, { shard: 'DB', check: true })).id, 20_000),
    );
    expect(j.status).toBe('done');
    expect(j.result).toMatchObject({ capped: false, segments: { observations_fts: 1 } });
    record(
      'FTS upkeep (check + merge to one segment)',
      '100k obs',
      j,
      ms,
      `${(j.result as { merges: number }).merges} merges`,
    );
  });

  it('backfills vectors a chunk at a time (first steps; the rest projected)', async () => {
    const { out: j, ms } = await timed(async () =>
      runJob(ids.teamId, (await startJob(env, embedJob, ids.teamId, { mode: 'missing' })).id, BACKFILL_STEPS),
    );
    // At least BACKFILL_STEPS: the lane's own alarm may have run one more before runJob read the job.
    expect(j.stats.steps).toBeGreaterThanOrEqual(BACKFILL_STEPS);
    const steps = j.stats.steps;
    const done = j.progress.done;
    const total = j.progress.total ?? 0;
    record(
      'backfill (embed missing vectors)',
      '100k obs',
      j,
      ms,
      `${done} of ${total} records in ${steps} steps → ~${Math.ceil((total / Math.max(1, done)) * steps)} steps, ~${Math.round(((total / Math.max(1, done)) * ms) / 60_000)} min`,
    );
    // The rest is marked embedded here instead of embedded: the import measured below queues the team's embed job,
    // which would otherwise run this whole backfill in the team's lane beside the jobs measured after it.
    for (const t of ['observations', 'summaries', 'prompts']) {
      await env.DB.prepare(`UPDATE ${t} SET embedded_at = ? WHERE team_id = ? AND embedded_at IS NULL`)
        .bind(Date.now(), ids.teamId)
        .run();
    }
  });

  it('exports the whole team in bounded resumable responses', async () => {
    const { out, ms } = await timed(async () => {
      let records = 0;
      let responses = 0;
      for (let c: string | null = 'start'; c !== null; responses++) {
        const text = await (
          await call(`/api/admin/export?cursor=${encodeURIComponent(c)}`, { token: id.token })
        ).text();
        c = null;
        for (const l of text.trimEnd().split('\n')) {
          if (l.startsWith('{"kind":"cursor"')) c = (JSON.parse(l) as { next: string }).next;
          else if (l !== '{"kind":"end"}') records++;
        }
      }
      return { records, responses };
    });
    expect(out.records).toBeGreaterThan(PROJECTS * PER_PROJECT);
    const per = usages.filter((u) => u.label.startsWith('fetch GET /api/admin/export')).map((u) => u.statements);
    expect(Math.max(...per)).toBeLessThanOrEqual(budget());
    lines.push({
      job: 'export (GET ?cursor=, a response = a step)',
      size: '100k obs',
      steps: out.responses,
      stmtMax: Math.max(...per),
      stmtTypical: median(per),
      msMax: 0,
      msTypical: Math.round(ms / out.responses),
      heldMax: 0,
      wallMs: ms,
      note: `${out.records} records; ms/step is the mean`,
    });
  });

  it('consolidates a project of 500 observations', async () => {
    const { out: j, ms } = await timed(async () =>
      runJob(ids.teamId, (await startJob(env, consolidateJob, ids.teamId, { projectId: fx.projectIds[1]! })).id, 5_000),
    );
    expect(j.status).toBe('done');
    record('consolidation (one project)', '500 obs of 100k', j, ms, JSON.stringify(j.result));
  });

  it('imports parts of 250 records into the big team', async () => {
    const session = `import-${fresh('s')}`;
    const project = `github.com/imported/${fresh('p')}`;
    const head = [
      JSON.stringify({ kind: 'project', key: project, visibility: 'team', owner: id.user, created_at: T0 }),
      JSON.stringify({
        kind: 'session',
        session_key: session,
        project,
        user: id.user,
        platform: 'claude-code',
        prompt_count: 1,
        started_at: T0,
        ended_at: null,
      }),
    ];
    const obs = (i: number) =>
      JSON.stringify({
        kind: 'observation',
        session_key: session,
        prompt_number: 1,
        prompt_id: null,
        author: id.user,
        created_at: T0 + i,
        type: 'discovery',
        title: `Imported note ${i}`,
        subtitle: null,
        facts: [`imported fact ${i}`],
        narrative: `An imported narrative about item ${i}.`,
        concepts: [],
        files_read: [`src/imported/${i % 17}.ts`],
        files_modified: [],
        discovery_tokens: 0,
        content_hash: `imp-${session}-${i}`,
        agent_id: null,
        agent_type: null,
        source: 'import',
      });
    const parts = 4;
    const { ms } = await timed(async () => {
      for (let p = 0; p < parts; p++) {
        const body = [
          ...(p === 0 ? head : []),
          ...Array.from({ length: p === 0 ? 248 : 250 }, (_, i) => obs(p * 250 + i)),
        ].join('\n');
        const res = await importNow(id.token, `${body}\n`);
        expect(res.status).toBe(200);
      }
    });
    // Each part is written by the request that brings it (Workers Paid): what one request sent, however big the team.
    const requests = usages
      .filter((u) => u.label === 'fetch POST /api/admin/import')
      .map((u) => u.statements + u.subrequests);
    expect(requests).toHaveLength(parts);
    expect(Math.max(...requests)).toBeLessThanOrEqual(3 * pieceCost(90) + 30);
    lines.push({
      job: 'import (a part of 250 records, written by its request)',
      size: 'into 100k obs',
      steps: parts,
      stmtMax: Math.max(...requests),
      stmtTypical: median(requests),
      msMax: 0,
      msTypical: Math.round(ms / parts),
      heldMax: 0,
      wallMs: Math.round(ms / parts),
      note: `${parts} requests (no job): statements and subrequests a request; ms and wall are per part`,
    });
  });

  it('forgets a project: rows gone from every table at once, terms gone from every FTS segment within one upkeep cycle', async () => {
    const p = 3;
    const pid = fx.projectIds[p]!;
    const before = await projectTraces(env.DB, ids.teamId, pid, fx.words[p]!);
    expect(before.observations).toBe(PER_PROJECT);
    expect(before['observations_fts segments']).toBeGreaterThan(0);
    const total = before.observations + before.summaries + before.prompts;
    const started = Date.now();
    usages = [];
    const res = await call('/api/forget', {
      token: id.token,
      json: { kind: 'project', project: fx.keys[p], confirm: total },
    });
    expect(res.status).toBe(202);
    const answered = Date.now() - started;
    const { job } = (await res.json()) as { job: { id: string } };
    const forget = await runJob(ids.teamId, job.id, 5_000);
    expect(forget.status).toBe('done');
    const rowsGone = Date.now() - started;
    const rowsLeft = await projectTraces(env.DB, ids.teamId, pid, fx.words[p]!);
    // The cycle the forget asked for (its lane's alarm may have run it already).
    const [asked] = (await lane(null).list(1, 'fts-upkeep')).map(jobRecord);
    const cycle = await runJob(null, asked!.id, 20_000);
    const gone = Date.now() - started;
    const after = await projectTraces(env.DB, ids.teamId, pid, fx.words[p]!);
    expect(
      Object.values(after).every((n) => n === 0),
      JSON.stringify(after),
    ).toBe(true);
    expect(rowsLeft.observations + rowsLeft.sessions + rowsLeft.summaries + rowsLeft.prompts).toBe(0);
    record('forget project', '500 obs of 100k', forget, rowsGone, `request answered in ${answered} ms`);
    record(
      'FTS upkeep after the forget',
      '100k obs',
      cycle,
      gone - rowsGone,
      `${(cycle.result as { merges: number }).merges} merges`,
    );
    lines.push({
      job: 'forget-to-gone (request → absent from every table and FTS segment)',
      size: '500 obs of 100k',
      steps: forget.stats.steps + cycle.stats.steps,
      stmtMax: Math.max(forget.stats.statements.max, cycle.stats.statements.max),
      stmtTypical: 0,
      msMax: 0,
      msTypical: 0,
      heldMax: 0,
      wallMs: gone,
      note: `tables empty after ${(rowsGone / 1000).toFixed(1)} s, segments after ${(gone / 1000).toFixed(1)} s (steps back to back)`,
    });
  });

  it('sweeps a year of retention: about half the team, in bounded chunks', async () => {
    const before = T0 + (PROJECTS * PER_PROJECT * STEP_MS) / 2;
    const { out: j, ms } = await timed(async () =>
      runJob(ids.teamId, (await startJob(env, retentionSweepJob, ids.teamId, { before, days: 365 })).id, 20_000),
    );
    expect(j.status).toBe('done');
    const left = (await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND created_at < ?')
      .bind(ids.teamId, before)
      .first<{ n: number }>())!.n;
    expect(left).toBe(0);
    record('retention sweep', '~50k of 100k obs', j, ms, JSON.stringify(j.result));
    const { out: cycle, ms: ums } = await timed(async () => {
      const [asked] = (await lane(null).list(1, 'fts-upkeep')).map(jobRecord);
      return runJob(null, asked!.id, 20_000);
    });
    record(
      'FTS upkeep after the sweep',
      '~50k obs left',
      cycle,
      ums,
      `${(cycle.result as { merges: number }).merges} merges`,
    );
  });

  it(`moves a team of ${MOVE_PROJECTS} projects to another database in bounded steps (projected to 200)`, async () => {
    const mover = await newIdentity();
    const m = await idsOf(mover);
    const small = await seedScale(m, fresh('move'), MOVE_PROJECTS, PER_PROJECT);
    const res = await call(`/api/admin/teams/${mover.team}/move`, {
      token: ADMIN_SECRET,
      json: { shard: 'DB_1', force: true },
    });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: { id: string } };
    const { out: j, ms } = await timed(() => finishJob(m.teamId, job.id, 20_000));
    expect(j.status).toBe('done');
    const left = (await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
      .bind(m.teamId)
      .first<{ n: number }>())!.n;
    expect(left).toBe(0);
    const factor = (PROJECTS * PER_PROJECT) / small.rows.observations!;
    const working = usages.filter((u) => u.label === 'job move-team' && u.statements > 0).length;
    record(
      'team move (DB → DB_1)',
      `${small.rows.observations} obs`,
      j,
      ms,
      `${ms - j.stats.ms.total} ms of it the 30 s settle wait; ~${Math.round(working * factor)} steps, ~${Math.round((j.stats.ms.total * factor) / 60_000)} min of work projected at 100k`,
    );
  });
});
