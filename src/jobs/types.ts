// What a job kind is: a name, its parameters' schema, a first cursor and one bounded, idempotent step.
// The runner (job-do.ts) calls `step` once per invocation with the cursor it saved after the previous one; a
// step does units of work while `ctx.fits` says the next one fits the step's budget, and answers the cursor to
// go on from. If the object dies mid-step, the same step runs again from the same cursor: every step must be
// safe to repeat (deletes and upserts by id are; inserts need a natural key).
import type * as z from 'zod';
import type { CairnEnv } from '../env';
import type { JobProgress } from '#shared/jobs';

/** What one step may use. Every step is one invocation of the job's Durable Object (its alarm). */
export interface StepBudget {
  /** D1 statements (each statement of a batch counts). */
  statements: number;
  /** Wall-clock ms of work: a step starts no new unit past this. */
  ms: number;
  /** Bytes of bulk data (vectors) held at once. */
  bytes: number;
  /**
   * Every subrequest: D1 statements and the others (Durable Object calls, R2, Vectorize, Workers AI, fetches),
   * one pool as the platform counts them (src/db/meter.ts).
   */
  subrequests: number;
}

/** What one more unit of work will cost at most. */
export interface UnitCost {
  /** D1 statements. */
  statements: number;
  /** Subrequests other than D1 statements. */
  subrequests?: number;
  bytes?: number;
}

export interface StepContext {
  readonly env: CairnEnv;
  readonly jobId: string;
  /** The team whose lane runs the job; null for the server's own jobs (lane `system`). */
  readonly teamId: number | null;
  /** The user who started it, if a person did. */
  readonly actorUserId: number | null;
  /** When the step began (ms epoch). */
  readonly now: number;
  readonly budget: StepBudget;
  /**
   * Whether a unit costing `cost` still fits: statements, subrequests and time left. The first unit of a step
   * always fits (a step that did nothing would never end); a kind's unit must fit an empty budget.
   */
  fits(cost: UnitCost): boolean;
  /** D1 statements, every subrequest (statements included) and ms this step has used so far (counted by the meter). */
  used(): { statements: number; subrequests: number; ms: number };
  /** Records that the step holds `bytes` of bulk data now (the peak is reported per step). */
  holding(bytes: number): void;
  /**
   * Pauses as long as the step worked since its last pause, at most PACE_MAX_MS: a job working through a
   * database (or, locally, the one workerd thread) that other teams' requests share leaves them room between its
   * units, so a request of many statements does not wait behind one unit per statement.
   */
  breathe(): Promise<void>;
}

export interface StepOutcome<C> {
  cursor: C;
  done: boolean;
  progress: JobProgress;
  /** Small, JSON: what a finished job reports (counts, a summary). Kept from the last step that set it. */
  result?: unknown;
  /** Run the next step no sooner than this many ms from now (a job waiting on something outside it). */
  waitMs?: number;
}

/** A failure that retrying cannot fix: the job ends `failed` at once with this code and message. */
export class JobFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'JobFailure';
  }
}

export type Lane = 'team' | 'system';

export interface JobKind<P = unknown, C = unknown> {
  /** Stable name: stored with every job, shown in the API (`forget-project`, `embed`, …). */
  readonly name: string;
  /** `team`: runs in the team's lane (one team's jobs take turns); `system`: the server's own lane. */
  readonly lane: Lane;
  /** Parameters, checked when the job starts (they are stored as JSON). */
  readonly params: z.ZodType<P>;
  /** Whether an admin may start it with POST /api/admin/jobs (others are started by their feature's route or the server). */
  readonly adminStartable?: boolean;
  /**
   * Its result and error may name what only its starter may see (a private project's key): anyone else who reads
   * the job (an admin listing the team's jobs) sees its kind, status and progress, not those (jobs/start.ts `jobFor`).
   */
  readonly personal?: boolean;
  /**
   * At most one queued or running job per key: starting another answers the one there (a second `embed`
   * while one runs). Null or absent: every start is a new job.
   */
  dedupe?(params: P): string | null;
  /**
   * With a dedupe key: a start that finds the same job already running queues one more (at most one waits), instead
   * of answering the running one. For a job asked for after a change whose running copy may already be past it: an
   * FTS upkeep cycle merging a later index than the one a forget just wrote delete markers into.
   */
  readonly afterRunning?: boolean;
  /** The cursor before the first step, and the progress to show until it runs. */
  init(params: P, ctx: { teamId: number | null; now: number }): { cursor: C; progress: JobProgress };
  step(ctx: StepContext, params: P, cursor: C): Promise<StepOutcome<C>>;
}

/** Any kind, for the registry (methods take their parameters bivariantly, so every kind fits). */
export type AnyJobKind = JobKind<unknown, unknown>;
