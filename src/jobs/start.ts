// Starting and reading jobs from the Worker: the typed doors to a lane's JobDO.
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { jobRecord, jobStub, type JobRecord } from './job-do';
import { jobKind } from './registry';
import type { JobKind } from './types';
import type { WireJob } from '#shared/jobs';

/** The job as the API answers it (who may read it is checked before). */
export function wireJob(j: JobRecord): WireJob {
  const { actorUserId: _a, teamId: _t, ...wire } = j;
  return wire;
}

/**
 * The job as `reader` may see it: a personal kind's result and error message (they may name a private project) only
 * for the person who started it; others get its kind, status and progress, and the error's code alone.
 */
export function jobFor(j: JobRecord, reader: { userId: number }): WireJob {
  const wire = wireJob(j);
  if (!jobKind(j.kind)?.personal || j.actorUserId === reader.userId) return wire;
  return {
    ...wire,
    result: null,
    error: wire.error && { code: wire.error.code, message: 'Only the person who started this job sees its details.' },
  };
}

export interface JobActor {
  userId: number;
  handle: string;
}

/**
 * Queues a job of `kind` in the team's lane (`teamId` null: the server's own) and answers it at once. `opts.now` is
 * the server's own time for the job's start (the daily cron's scheduled time); nothing a client sends sets it.
 * `opts.notBefore`: its first step waits until then, and a start that finds the same job still queued moves it there
 * (job-do.ts).
 */
export async function startJob<P, C>(
  env: CairnEnv,
  kind: JobKind<P, C>,
  teamId: number | null,
  params: P,
  actor: JobActor | null = null,
  opts: { now?: number; notBefore?: number } = {},
): Promise<JobRecord> {
  if (jobKind(kind.name) !== (kind as unknown))
    throw new Error(`job kind ${kind.name} is not registered (src/index.ts registerJobKinds)`);
  const parsed = kind.params.safeParse(params);
  if (!parsed.success)
    throw new AppError(
      400,
      'invalid_job_params',
      `Bad parameters for a ${kind.name} job: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
    );
  const started = await jobStub(env, teamId).start({
    kind: kind.name,
    params: parsed.data,
    teamId,
    actorUserId: actor?.userId ?? null,
    actor: actor?.handle ?? null,
    now: opts.now,
    ...(opts.notBefore === undefined ? {} : { notBefore: opts.notBefore }),
  });
  if ('refused' in started)
    throw new AppError(
      429,
      'too_many_jobs',
      `You have ${started.open} jobs queued or running (at most ${started.limit}); start this one when one of them is done.`,
    );
  return jobRecord(started);
}

/** A job of the team's lane, or null. */
export async function findJob(env: CairnEnv, teamId: number | null, id: string): Promise<JobRecord | null> {
  if (!/^job_[0-9a-z]{1,40}$/.test(id)) return null;
  const j = await jobStub(env, teamId).get(id);
  return j && jobRecord(j);
}

export async function listJobs(
  env: CairnEnv,
  teamId: number | null,
  limit: number,
  kind?: string,
): Promise<JobRecord[]> {
  return (await jobStub(env, teamId).list(limit, kind)).map(jobRecord);
}
