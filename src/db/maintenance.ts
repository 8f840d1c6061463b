// The daily cron's record of its own runs (maintenance_runs, on the directory): each part notes when it
// started and how it ended, so an operator sees a cron that failed or stopped running (GET /api/admin/health).
import { and, eq, inArray } from 'drizzle-orm';
import { db } from './client';
import { maintenanceRuns } from './schema';

/**
 * What is recorded: `daily`, the day's run as a whole (its dispatcher job's progress through the teams, src/maintenance/),
 * the server-wide parts it starts first (`fts_check`, `session_retire`, `upgrade_check`), and `upgrade`: the last
 * upgrade job's record, whose detail holds the data version reached.
 */
export const MAINTENANCE_JOBS = ['daily', 'fts_check', 'session_retire', 'upgrade_check', 'upgrade'] as const;
export type MaintenanceJob = (typeof MAINTENANCE_JOBS)[number];

export interface MaintenanceRun {
  job: string;
  startedAt: number;
  finishedAt: number | null;
  /** null: still running, or its invocation died before it could say. */
  ok: boolean | null;
  error: string | null;
  detail: Record<string, unknown>;
}

/** Notes that `job` started (the row of its last run is replaced). */
export async function runStarted(d1: D1Database, job: MaintenanceJob, now: number): Promise<void> {
  const row = { job, startedAt: now, finishedAt: null, ok: null, error: null, detail: '{}' };
  await db(d1).insert(maintenanceRuns).values(row).onConflictDoUpdate({ target: maintenanceRuns.job, set: row });
}

/** Notes how `job` ended: its counts (never memory text), or the error's message. */
export async function runEnded(
  d1: D1Database,
  job: MaintenanceJob,
  now: number,
  outcome: { detail: Record<string, unknown> } | { error: string },
): Promise<void> {
  const set =
    'error' in outcome
      ? { finishedAt: now, ok: 0, error: outcome.error.slice(0, 500) }
      : { finishedAt: now, ok: 1, error: null, detail: JSON.stringify(outcome.detail) };
  await db(d1).update(maintenanceRuns).set(set).where(eq(maintenanceRuns.job, job));
}

/**
 * A run's progress while it goes on (its detail; a failure recorded by an earlier attempt is cleared), only while the
 * record is still this run's (`startedAt`): a newer run that replaced it is not overwritten by an older one.
 */
export async function runProgress(
  d1: D1Database,
  job: MaintenanceJob,
  startedAt: number,
  detail: Record<string, unknown>,
): Promise<void> {
  await db(d1)
    .update(maintenanceRuns)
    .set({ ok: null, error: null, finishedAt: null, detail: JSON.stringify(detail) })
    .where(and(eq(maintenanceRuns.job, job), eq(maintenanceRuns.startedAt, startedAt)));
}

/** How this run ended (as `runEnded`), only while the record is still this run's. */
export async function runEndedIfOwn(
  d1: D1Database,
  job: MaintenanceJob,
  startedAt: number,
  now: number,
  outcome: { detail: Record<string, unknown> } | { error: string },
): Promise<void> {
  const set =
    'error' in outcome
      ? { finishedAt: now, ok: 0, error: outcome.error.slice(0, 500) }
      : { finishedAt: now, ok: 1, error: null, detail: JSON.stringify(outcome.detail) };
  await db(d1)
    .update(maintenanceRuns)
    .set(set)
    .where(and(eq(maintenanceRuns.job, job), eq(maintenanceRuns.startedAt, startedAt)));
}

/** The records of what runs today (rows of parts an older version ran per team — retention, backup, consolidate — are left out). */
export async function maintenanceRunList(d1: D1Database): Promise<MaintenanceRun[]> {
  const rows = await db(d1)
    .select()
    .from(maintenanceRuns)
    .where(inArray(maintenanceRuns.job, [...MAINTENANCE_JOBS]))
    .orderBy(maintenanceRuns.job);
  return rows.map((r) => ({
    job: r.job,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    ok: r.ok === null ? null : r.ok === 1,
    error: r.error,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
  }));
}

/** The data version the last finished upgrade reached (0: none ever finished: an install from before versions). */
export async function dataVersion(d1: D1Database): Promise<number> {
  const row = await db(d1)
    .select({ ok: maintenanceRuns.ok, detail: maintenanceRuns.detail })
    .from(maintenanceRuns)
    .where(eq(maintenanceRuns.job, 'upgrade'))
    .get();
  if (!row || row.ok !== 1) return 0;
  const v = (JSON.parse(row.detail) as { version?: unknown }).version;
  return typeof v === 'number' ? v : 0;
}
