// Following a server job (GET /api/jobs/:id) with a progress bar on stderr until it is finished: `cairn forget
// --project`, each part of `cairn import` a server leaves to a job. A line is written when the progress changes (on
// a terminal it is redrawn in place). A poll that fails is tried again: the job goes on without the client; a poll
// refused by the token's read limit (429) waits as long as the server asks.
import { isFinished, progressLine, type WireJob } from '#shared/jobs';
import type { Io } from '../io';
import { call, errorText } from './http';

export interface FollowOptions {
  url: string;
  token: string;
  device?: string | null;
  /** Between polls (CAIRN_JOB_POLL_MS overrides; tests make it short). */
  pollMs?: number;
  /** Polls that failed in a row before giving up (the job keeps running on the server). */
  maxFailures?: number;
  /** The line shown for a job's state (default: its own progress bar). */
  line?: (job: WireJob) => string;
}

export async function followJob(first: WireJob, io: Io, opts: FollowOptions): Promise<WireJob> {
  const pollMs = Number(io.env.CAIRN_JOB_POLL_MS ?? '') || opts.pollMs || 1_000;
  const maxFailures = opts.maxFailures ?? 30;
  let job = first;
  let last = '';
  let failures = 0;
  const show = (j: WireJob) => {
    const line = (opts.line ?? ((x: WireJob) => progressLine(x.progress)))(j);
    if (line !== last) io.err(`${line}\n`);
    last = line;
  };
  show(job);
  while (!isFinished(job.status)) {
    await new Promise((r) => setTimeout(r, pollMs));
    try {
      const r = await call(opts.url, `/api/jobs/${encodeURIComponent(job.id)}`, {
        token: opts.token,
        device: opts.device ?? undefined,
        timeoutMs: 30_000,
      });
      if (r.status === 429) {
        // The token's read limit: wait as long as the server says, which is not a failure of the job or the link.
        const after = Number(r.headers['retry-after']);
        await new Promise((res) =>
          setTimeout(res, Math.min(65_000, Number.isFinite(after) && after > 0 ? after * 1000 : pollMs)),
        );
        continue;
      }
      if (r.status !== 200) throw new Error(errorText(r));
      job = (JSON.parse(r.text) as { job: WireJob }).job;
      failures = 0;
      show(job);
    } catch (e) {
      if (++failures >= maxFailures)
        throw new Error(`lost the job ${job.id} (${String(e)}); it goes on on the server: GET /api/jobs/${job.id}`);
    }
  }
  return job;
}
