// JobDO: the lane that runs whole-team (and whole-server) work as resumable jobs. One object per team
// (`team:<id>`) and one for the server (`system`). Each job keeps its cursor, progress and step costs in the
// object's own SQLite storage; the alarm runs ONE step of one job (the one waiting longest), saves what it
// returned and sets the next alarm, so every step is its own invocation with its own limits, and the jobs of
// a lane take turns. A step's writes land before its cursor is saved: if the object dies in between (a deploy,
// an eviction), the same step runs again from the same cursor, which every kind must make harmless
// (src/jobs/types.ts). A new instance that finds a step marked in flight counts that death and runs it again
// (MAX_DEATHS in a row fail the job); while a step runs, a short alarm stays set, so a dead instance is noticed
// within STEP_LEASE_MS even if nothing calls the object.
import { DurableObject } from 'cloudflare:workers';
import { configOf } from '../config';
import { migrateDoSqlite, type DoSchemaSteps } from '../db/do-schema';
import { invocation } from '../db/meter';
import { countedStub, meterDurableObject } from '../db/meter-bindings';
import type { CairnEnv } from '../env';
import type { Json, JobProgress, JobStatus, JobStepStats, WireJob } from '#shared/jobs';
import { jobKind } from './registry';
import { stepContext, type StepCost } from './step';
import { JobFailure, type StepBudget } from './types';

/** How long a step may run before the object checks whether its instance is still there. */
export const STEP_LEASE_MS = 10_000;
/** Failed attempts of one step before the job fails (with growing pauses between them). */
export const MAX_ATTEMPTS = 6;
/**
 * Instances that died in one step, in a row, before the job fails. A step that uses more than 30 s of CPU or
 * 128 MB is cut off by Cloudflare with its object, and would otherwise run again at once for ever, holding the
 * team's lane (a forget or a backup behind it) and paying for its work each time. A deploy also kills a step
 * (every object restarts), so one death is not enough to give up.
 */
export const MAX_DEATHS = 3;
/** Parameters longer than this (an import part, up to 1 MB) are let go when their job ends. */
const BULKY_PARAMS = 16_384;
/** Every column but `params` (which may be large): what reading a job for the API needs. */
const VIEW_COLUMNS = `id, kind, team_id, actor_user_id, actor, '' AS params, dedupe, status, cursor, progress, result, error, attempts, stats,
  created_at, started_at, updated_at, finished_at, next_at, stepping_since, deaths`;
/** Finished jobs a lane keeps for GET /api/admin/jobs. */
const KEEP_FINISHED = 200;
/**
 * Jobs one person may have queued or running in a lane at once. A lane runs its jobs' steps in turn, so each open
 * job delays everyone else's by a step: 40 forget jobs from one member made an admin's job wait 7.7 s instead of
 * 0.1 s. With the cap another person's job waits at most this many steps of theirs. Jobs the server starts have
 * no person and no cap.
 */
export const OPEN_JOBS_PER_PERSON = 3;

export const JOB_SCHEMA: DoSchemaSteps = [
  `CREATE TABLE IF NOT EXISTS jobs (
     id TEXT PRIMARY KEY, kind TEXT NOT NULL, team_id INTEGER, actor_user_id INTEGER, actor TEXT,
     params TEXT NOT NULL, dedupe TEXT, status TEXT NOT NULL, cursor TEXT NOT NULL, progress TEXT NOT NULL,
     result TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0, stats TEXT NOT NULL,
     created_at INTEGER NOT NULL, started_at INTEGER, updated_at INTEGER NOT NULL, finished_at INTEGER,
     next_at INTEGER, stepping_since INTEGER);
   CREATE INDEX IF NOT EXISTS jobs_next ON jobs (next_at) WHERE next_at IS NOT NULL;
   CREATE INDEX IF NOT EXISTS jobs_created ON jobs (created_at);`,
  // 2: instances that died inside the job's current step (reset when a step ends, either way).
  'ALTER TABLE jobs ADD COLUMN deaths INTEGER NOT NULL DEFAULT 0',
];

/** A start the lane refused: the person already has OPEN_JOBS_PER_PERSON jobs queued or running. */
export interface StartRefused {
  refused: 'too_many_jobs';
  open: number;
  limit: number;
}

export interface StartJob {
  kind: string;
  params: unknown;
  teamId: number | null;
  actorUserId: number | null;
  /** The starter's handle, shown with the job. */
  actor: string | null;
  now?: number;
  /**
   * Its first step runs no sooner than this (ms epoch). A start that finds the same job still queued (dedupe) moves
   * that job's first step to this time if it is later: work that should wait until a burst of starts is over (the
   * embed job an import's parts start, each part again) waits for the last of them.
   */
  notBefore?: number;
}

interface JobRow extends Record<string, SqlStorageValue> {
  id: string;
  kind: string;
  team_id: number | null;
  actor_user_id: number | null;
  actor: string | null;
  params: string;
  dedupe: string | null;
  status: string;
  cursor: string;
  progress: string;
  result: string | null;
  error: string | null;
  attempts: number;
  stats: string;
  created_at: number;
  started_at: number | null;
  updated_at: number;
  finished_at: number | null;
  next_at: number | null;
  stepping_since: number | null;
  deaths: number;
}

/** A job as the API shows it, with who may read it. */
export interface JobRecord extends WireJob {
  actorUserId: number | null;
  teamId: number | null;
}

/** A job as it crosses the object's RPC boundary: the result stays JSON text (see `jobRecord`). */
export interface StoredJob extends Omit<JobRecord, 'result'> {
  resultJson: string | null;
}

/** The job with its result parsed. */
export function jobRecord(j: StoredJob): JobRecord {
  const { resultJson, ...rest } = j;
  return { ...rest, result: resultJson === null ? null : (JSON.parse(resultJson) as Json) };
}

const emptyStats = (budget: StepBudget): JobStepStats => ({
  steps: 0,
  statements: { max: 0, total: 0 },
  ms: { max: 0, total: 0 },
  held: { max: 0 },
  subrequests: { max: 0, total: 0 },
  budget,
});

function addStep(s: JobStepStats, c: StepCost): JobStepStats {
  return {
    steps: s.steps + 1,
    statements: { max: Math.max(s.statements.max, c.statements), total: s.statements.total + c.statements },
    ms: { max: Math.max(s.ms.max, c.ms), total: s.ms.total + c.ms },
    held: { max: Math.max(s.held.max, c.held) },
    subrequests: { max: Math.max(s.subrequests.max, c.subrequests), total: s.subrequests.total + c.subrequests },
    budget: s.budget,
  };
}

const newId = () =>
  `job_${Date.now().toString(36)}${crypto.getRandomValues(new Uint32Array(2)).reduce((a, n) => a + n.toString(36).padStart(7, '0'), '')}`;

function view(r: JobRow): StoredJob {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status as JobStatus,
    progress: JSON.parse(r.progress) as JobProgress,
    resultJson: r.result,
    error: r.error === null ? null : (JSON.parse(r.error) as { code: string; message: string }),
    created_at: r.created_at,
    started_at: r.started_at,
    updated_at: r.updated_at,
    finished_at: r.finished_at,
    started_by: r.actor,
    stats: JSON.parse(r.stats) as JobStepStats,
    actorUserId: r.actor_user_id,
    teamId: r.team_id,
  };
}

/** Pause before attempt n + 1 of a failed step: 2 s, 8 s, 32 s, … up to 10 minutes. */
export const retryDelayMs = (attempts: number): number => Math.min(600_000, 2_000 * 4 ** Math.max(0, attempts - 1));

export class JobDO extends DurableObject<CairnEnv> {
  /** A step is running in this instance (an alarm delivered again meanwhile must not start a second one). */
  #stepping = false;

  constructor(ctx: DurableObjectState, env: CairnEnv) {
    super(ctx, env);
    migrateDoSqlite(ctx.storage.sql, JOB_SCHEMA);
    if (this.#buryDeadSteps(Date.now())) void ctx.blockConcurrencyWhile(() => ctx.storage.setAlarm(Date.now()));
  }

  /**
   * A step marked in flight belonged to an instance that is gone (an object has one live instance): the mark,
   * written before the step began, is the attempt, counted now. The step runs again (at once after one death, a
   * deploy's; then after a pause) until MAX_DEATHS in a row, when its job fails and the lane goes on. Answers
   * whether any was found.
   */
  #buryDeadSteps(now: number): boolean {
    const sql = this.ctx.storage.sql;
    const dead = sql
      .exec<{ id: string; kind: string; deaths: number }>(
        'SELECT id, kind, deaths FROM jobs WHERE stepping_since IS NOT NULL',
      )
      .toArray();
    for (const j of dead) {
      const deaths = j.deaths + 1;
      const error = {
        code: 'step_died',
        message: `The job's object died during its step ${deaths} time(s) in a row (a step past 30 s of CPU or 128 MB of memory is cut off with its object, and so is one running during a deploy).`,
      };
      sql.exec(
        'UPDATE jobs SET stepping_since = NULL, deaths = ?, error = ?, updated_at = ?, next_at = ? WHERE id = ?',
        deaths,
        JSON.stringify(error),
        now,
        now + (deaths === 1 ? 0 : retryDelayMs(deaths - 1)),
        j.id,
      );
      if (deaths >= MAX_DEATHS) {
        this.#finish(j.id, 'failed', error, now);
        console.error('job failed', { id: j.id, kind: j.kind, ...error });
      } else console.warn('job step died with its object; it will run again', { id: j.id, kind: j.kind, deaths });
    }
    return dead.length > 0;
  }

  /**
   * Queues a job (or answers the queued/running one with the same dedupe key) and wakes the lane; refuses a person
   * who already has OPEN_JOBS_PER_PERSON open jobs here (counted and inserted in one call: the object runs one
   * call at a time, so two starts cannot both pass the count).
   */
  async start(input: StartJob): Promise<StoredJob | StartRefused> {
    const kind = jobKind(input.kind);
    if (!kind) throw new JobFailure('unknown_job_kind', `No job kind "${input.kind}".`);
    const parsed = kind.params.safeParse(input.params);
    if (!parsed.success)
      throw new JobFailure(
        'invalid_job_params',
        `Bad parameters for ${kind.name}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const params = parsed.data;
    const sql = this.ctx.storage.sql;
    const dedupe = kind.dedupe?.(params) ?? null;
    if (dedupe !== null) {
      const open = sql
        .exec<JobRow>(
          `SELECT ${VIEW_COLUMNS} FROM jobs WHERE dedupe = ? AND status IN (${kind.afterRunning ? "'queued'" : "'queued', 'running'"}) LIMIT 1`,
          dedupe,
        )
        .toArray()[0];
      if (open) {
        if (open.status === 'queued' && input.notBefore !== undefined)
          sql.exec(
            'UPDATE jobs SET next_at = ? WHERE id = ? AND next_at < ?',
            input.notBefore,
            open.id,
            input.notBefore,
          );
        return view(this.#row(open.id)!);
      }
    }
    if (input.actorUserId !== null) {
      const open = sql
        .exec<{ n: number }>(
          "SELECT COUNT(*) AS n FROM jobs WHERE actor_user_id = ? AND status IN ('queued', 'running')",
          input.actorUserId,
        )
        .one().n;
      if (open >= OPEN_JOBS_PER_PERSON) return { refused: 'too_many_jobs', open, limit: OPEN_JOBS_PER_PERSON };
    }
    const now = input.now ?? Date.now();
    const first = kind.init(params, { teamId: input.teamId, now });
    const id = newId();
    sql.exec(
      `INSERT INTO jobs (id, kind, team_id, actor_user_id, actor, params, dedupe, status, cursor, progress, stats, created_at, updated_at, next_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?)`,
      id,
      kind.name,
      input.teamId,
      input.actorUserId,
      input.actor,
      JSON.stringify(params ?? null),
      dedupe,
      JSON.stringify(first.cursor ?? null),
      JSON.stringify(first.progress),
      JSON.stringify(emptyStats(this.#budget())),
      now,
      now,
      Math.max(now, input.notBefore ?? now),
    );
    await this.#schedule();
    return view(this.#row(id)!);
  }

  async get(id: string): Promise<StoredJob | null> {
    const r = this.#row(id);
    return r ? view(r) : null;
  }

  /** Newest first. */
  async list(limit = 50, kind?: string): Promise<StoredJob[]> {
    const n = Math.max(1, Math.min(200, limit));
    const rows = kind
      ? this.ctx.storage.sql
          .exec<JobRow>(
            `SELECT ${VIEW_COLUMNS} FROM jobs WHERE kind = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
            kind,
            n,
          )
          .toArray()
      : this.ctx.storage.sql
          .exec<JobRow>(`SELECT ${VIEW_COLUMNS} FROM jobs ORDER BY created_at DESC, id DESC LIMIT ?`, n)
          .toArray();
    return rows.map(view);
  }

  /** Runs one step of the job that has waited longest; then sets the alarm for the next. */
  async alarm(): Promise<void> {
    if (this.#stepping) {
      // The lease alarm came while this instance is still working: it is alive, look again later.
      await this.ctx.storage.setAlarm(Date.now() + STEP_LEASE_MS);
      return;
    }
    this.#stepping = true;
    try {
      const row = this.#due(Date.now());
      // One invocation per step, labelled by its kind (`job embed`): what the step sends is counted against the
      // plan's budget. Picking the job and scheduling the next alarm use only the object's own storage.
      if (row) await invocation(this, this.env, `job ${row.kind}`, () => this.#stepOnce(row));
    } finally {
      this.#stepping = false;
      await this.#schedule();
    }
  }

  #row(id: string): JobRow | undefined {
    return this.ctx.storage.sql.exec<JobRow>(`SELECT ${VIEW_COLUMNS} FROM jobs WHERE id = ?`, id).toArray()[0];
  }

  #budget(): StepBudget {
    return configOf(this.env).jobStep;
  }

  /** The job that has waited longest among those due at `now`. */
  #due(now: number): JobRow | undefined {
    return this.ctx.storage.sql
      .exec<JobRow>(
        'SELECT * FROM jobs WHERE next_at IS NOT NULL AND next_at <= ? ORDER BY next_at, created_at LIMIT 1',
        now,
      )
      .toArray()[0];
  }

  async #stepOnce(row: JobRow): Promise<void> {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    const kind = jobKind(row.kind);
    if (!kind) {
      this.#finish(
        row.id,
        'failed',
        { code: 'unknown_job_kind', message: `This server does not run "${row.kind}" jobs.` },
        now,
      );
      return;
    }
    sql.exec(
      "UPDATE jobs SET status = 'running', stepping_since = ?, started_at = coalesce(started_at, ?), updated_at = ? WHERE id = ?",
      now,
      now,
      now,
      row.id,
    );
    await this.ctx.storage.setAlarm(now + STEP_LEASE_MS);
    const ctx = stepContext({
      env: this.env,
      jobId: row.id,
      teamId: row.team_id,
      actorUserId: row.actor_user_id,
      budget: this.#budget(),
    });
    try {
      const outcome = await kind.step(ctx, JSON.parse(row.params) as unknown, JSON.parse(row.cursor) as unknown);
      const out = { outcome, cost: ctx.cost() };
      const done = Date.now();
      const stats = addStep(JSON.parse(row.stats) as JobStepStats, out.cost);
      const result = out.outcome.result === undefined ? row.result : JSON.stringify(out.outcome.result);
      sql.exec(
        `UPDATE jobs SET cursor = ?, progress = ?, result = ?, stats = ?, attempts = 0, deaths = 0, error = NULL,
           stepping_since = NULL, updated_at = ?, next_at = ? WHERE id = ?`,
        JSON.stringify(out.outcome.cursor ?? null),
        JSON.stringify(out.outcome.progress),
        result,
        JSON.stringify(stats),
        done,
        out.outcome.done ? null : done + Math.max(0, out.outcome.waitMs ?? 0),
        row.id,
      );
      if (out.outcome.done) this.#finish(row.id, 'done', null, done);
    } catch (err) {
      const failed = Date.now();
      const attempts = row.attempts + 1;
      const error =
        err instanceof JobFailure
          ? { code: err.code, message: err.message }
          : { code: 'step_failed', message: (err as Error).message ?? String(err) };
      if (err instanceof JobFailure || attempts >= MAX_ATTEMPTS) {
        sql.exec('UPDATE jobs SET attempts = ?, deaths = 0, stepping_since = NULL WHERE id = ?', attempts, row.id);
        this.#finish(row.id, 'failed', error, failed);
        console.error('job failed', { id: row.id, kind: row.kind, ...error });
      } else {
        sql.exec(
          'UPDATE jobs SET attempts = ?, deaths = 0, error = ?, stepping_since = NULL, updated_at = ?, next_at = ? WHERE id = ?',
          attempts,
          JSON.stringify(error),
          failed,
          failed + retryDelayMs(attempts),
          row.id,
        );
        console.warn('job step failed; it will run again', { id: row.id, kind: row.kind, attempts, ...error });
      }
    }
  }

  #finish(id: string, status: 'done' | 'failed', error: { code: string; message: string } | null, at: number): void {
    const sql = this.ctx.storage.sql;
    sql.exec(
      'UPDATE jobs SET status = ?, error = ?, next_at = NULL, finished_at = ?, updated_at = ? WHERE id = ?',
      status,
      error && JSON.stringify(error),
      at,
      at,
      id,
    );
    sql.exec("UPDATE jobs SET params = 'null' WHERE id = ? AND length(params) > ?", id, BULKY_PARAMS);
    sql.exec(
      `DELETE FROM jobs WHERE status IN ('done', 'failed') AND id NOT IN
         (SELECT id FROM jobs WHERE status IN ('done', 'failed') ORDER BY finished_at DESC LIMIT ?)`,
      KEEP_FINISHED,
    );
  }

  /** The alarm for the next runnable job (now if one is due); none when the lane is idle. */
  async #schedule(): Promise<void> {
    if (this.#stepping) return; // the running step sets it when it ends
    const next = this.ctx.storage.sql
      .exec<{ t: number | null }>('SELECT min(next_at) AS t FROM jobs WHERE next_at IS NOT NULL')
      .one().t;
    if (next === null) {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next) await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }
}

// Every RPC method is an invocation of its own; the alarm opens one per step itself (src/db/meter.ts).
meterDurableObject(JobDO, 'job', ['alarm']);

/** A lane: a team's (`teamId`) or the server's own (null). */
export function jobStub(env: Pick<CairnEnv, 'JOBS'>, teamId: number | null): DurableObjectStub<JobDO> {
  return countedStub(env.JOBS.getByName(teamId === null ? 'system' : `team:${teamId}`), 'job');
}
