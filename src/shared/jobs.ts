// The wire shape of a job (GET /api/admin/jobs/:id), read by the hooks client's progress bars and the viewer.
// Types and one pure renderer only: both programs load this module.

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

/** JSON values (a job's result crosses the Durable Object boundary and the wire as JSON). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface JobProgress {
  /** Units done so far (rows, records, sessions, …: `unit` says which). */
  done: number;
  /** Units in all, when the job knows (null: not counted yet, or not countable). */
  total: number | null;
  unit: string;
  /** What the job is doing now, for a person ("deleting rows", "calling session objects"). */
  phase?: string;
}

/** What a job's steps cost, for the operator and the benchmarks: each step runs within its budget. */
export interface JobStepStats {
  steps: number;
  statements: { max: number; total: number };
  ms: { max: number; total: number };
  /** Bytes of vectors (or other bulk data) one step held at once. */
  held: { max: number };
  /** Every subrequest of a step, its D1 statements included (one pool, as the platform counts them). */
  subrequests: { max: number; total: number };
  /** The budget a step ran under. */
  budget: { statements: number; ms: number; bytes: number; subrequests: number };
}

export interface WireJob {
  id: string;
  kind: string;
  status: JobStatus;
  progress: JobProgress;
  /** What the job found or made, once done (kind-specific, small). */
  result: Json;
  error: { code: string; message: string } | null;
  created_at: number;
  started_at: number | null;
  updated_at: number;
  finished_at: number | null;
  /** Who started it (a handle), null for jobs the server started itself. */
  started_by: string | null;
  stats: JobStepStats;
}

export const isFinished = (s: JobStatus): boolean => s === 'done' || s === 'failed';

/** `[#######.............]  35%  1,234 / 3,500 rows  deleting rows` — one line, `width` cells of bar. */
export function progressLine(p: JobProgress, width = 24): string {
  const fraction = p.total && p.total > 0 ? Math.min(1, Math.max(0, p.done / p.total)) : null;
  const filled = fraction === null ? 0 : Math.round(fraction * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const pct = fraction === null ? '   ?' : `${String(Math.floor(fraction * 100)).padStart(3)}%`;
  const n = (x: number) => x.toLocaleString('en-US');
  const count = p.total === null ? `${n(p.done)} ${p.unit}` : `${n(p.done)} / ${n(p.total)} ${p.unit}`;
  return [bar, pct, count, p.phase ?? ''].filter((s) => s !== '').join('  ');
}
