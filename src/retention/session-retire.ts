// The `session-retire` job: finds ended sessions whose Durable Object still holds their text past its retention
// time, and has each empty itself. An object empties its storage from its own alarm (src/session/session-do.ts), but
// an alarm that keeps failing is retried a few times and then dropped by Cloudflare, and nothing else wakes an ended
// session's object: its prompts and events would stay for good. D1 keeps when each object should have emptied
// (`sessions.retire_after`, set when the end arrives, cleared when the object has emptied); the daily cron starts
// one job per database, which pages through the sessions past that time (plus an hour of grace for the object's
// own alarm) in (retire_after, id) order and asks each object (`sweepRetention`). One unit is a page of PAGE sessions:
// one look-up, PAGE calls, one batch of updates, so a step's cost is fixed however many teams or sessions there are.
// Asking again is harmless: an object that has emptied answers that it holds nothing.
import * as z from 'zod';
import { boundShards, shardDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { startJob } from '../jobs/start';
import type { JobKind } from '../jobs/types';
import type { JobProgress } from '#shared/jobs';
import { sessionStub } from '../session/session-do';
import { retentionMs } from '../session/retention';
import { sessionsToRetire, setRetireAfter } from './queries';

/** Sessions a unit asks about. */
export const RETIRE_PAGE = 20;
/** How long past its retire time an object is left to its own alarm before the sweep asks it. */
export const RETIRE_GRACE_MS = 3_600_000;
const UNIT = { statements: RETIRE_PAGE + 1, subrequests: RETIRE_PAGE };

const Params = z
  .object({
    shard: z.string().regex(/^DB(?:_[1-9]\d{0,3})?$/),
    /** Sessions whose retire time is at or before this (ms epoch). */
    before: z.number().int().nonnegative(),
  })
  .strict();
type Params = z.infer<typeof Params>;

interface Cursor {
  /** The last session asked, as (retire_after, id); null before the first. */
  at: number | null;
  id: number;
  asked: number;
  /** Objects that held nothing once asked (emptied now, or already empty). */
  emptied: number;
  /** Objects still holding text, not due yet (their alarm is set again) or still at work. */
  holding: number;
  /** Objects that did not answer (asked again by the next run). */
  unreachable: number;
}

const progress = (c: Cursor, phase: string): JobProgress => ({ done: c.asked, total: null, unit: 'sessions', phase });
const result = (c: Cursor) => ({ asked: c.asked, emptied: c.emptied, holding: c.holding, unreachable: c.unreachable });

export const sessionRetireJob: JobKind<Params, Cursor> = {
  name: 'session-retire',
  lane: 'system',
  params: Params,
  dedupe: (p) => `session-retire:${p.shard}`,
  init: () => {
    const cursor: Cursor = { at: null, id: 0, asked: 0, emptied: 0, holding: 0, unreachable: 0 };
    return { cursor, progress: progress(cursor, 'asking session objects') };
  },
  async step(ctx, p, start) {
    const d = shardDb(ctx.env, p.shard);
    const keepMs = retentionMs(ctx.env.SESSION_RETENTION_SECONDS);
    const c: Cursor = { ...start };
    while (ctx.fits(UNIT)) {
      const page = await sessionsToRetire(d, p.before, c.at === null ? null : { at: c.at, id: c.id }, RETIRE_PAGE);
      if (page.length === 0) return { cursor: c, done: true, progress: progress(c, 'done'), result: result(c) };
      const answers = await Promise.all(
        page.map((s) =>
          sessionStub(ctx.env, s.teamId, s.sessionKey)
            .sweepRetention()
            .catch(() => null),
        ),
      );
      const updates: { id: number; retireAfter: number | null }[] = [];
      for (const [i, s] of page.entries()) {
        const a = answers[i];
        if (!a) c.unreachable++;
        else if (!a.holds) {
          c.emptied++;
          updates.push({ id: s.id, retireAfter: null });
        } else {
          c.holding++;
          // Looked at again once it is due (its own alarm should have emptied it by then), or a retention time on.
          updates.push({ id: s.id, retireAfter: a.dueAt ?? ctx.now + keepMs });
        }
      }
      await setRetireAfter(d, updates);
      const last = page[page.length - 1]!;
      c.at = last.retireAfter;
      c.id = last.id;
      c.asked += page.length;
      await ctx.breathe();
    }
    return { cursor: c, done: false, progress: progress(c, 'asking session objects') };
  },
};

/** The daily cron's part: one sweep per database (a job that is still running from yesterday is left to finish). */
export async function startSessionRetirement(env: CairnEnv, now: number): Promise<string[]> {
  const ids: string[] = [];
  for (const shard of boundShards(env))
    ids.push((await startJob(env, sessionRetireJob, null, { shard, before: now - RETIRE_GRACE_MS })).id);
  return ids;
}
