// Held-back memory (admins): POST /api/admin/release lets records that were held as instruction-like text
// (src/db/held.ts) reach the rest of the team; the review queue (/api/admin/review) lists what is held.
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv, AuthContext } from '../auth/types';
import { heldQueue, releaseHeld, type HeldIds, type HeldRow } from '../db/held';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { jsonBody } from '../lib/validate';
import { writableTeamDb } from '../slots/enter-write';

const MAX_IDS = 500;
const Ids = z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)).max(MAX_IDS);

/** Observation ids in `ids`; session summaries and prompts by their own lists (`S12` and `P7` in the CLI). */
export const ReleaseBody = z
  .object({ ids: Ids.default([]), summaries: Ids.default([]), prompts: Ids.default([]) })
  .strict();
export type ReleaseBody = z.infer<typeof ReleaseBody>;

export interface HeldItem {
  kind: HeldRow['kind'];
  id: number;
  title: string | null;
  project: string;
  author: string;
  time: string;
  /** Why it is held: the classifier's kinds. */
  held: string[];
}

/** What the review queue shows of held rows. */
export async function heldItems(d1: D1Database, teamId: number, limit: number): Promise<HeldItem[]> {
  return (await heldQueue(d1, teamId, limit)).map((r) => ({
    kind: r.kind,
    id: r.id,
    title: r.title,
    project: r.project,
    author: r.author,
    time: new Date(r.createdAt).toISOString(),
    held: r.heldKinds.split(','),
  }));
}

export async function release(env: CairnEnv, auth: AuthContext, body: ReleaseBody, now: number) {
  const ids: HeldIds = { observation: body.ids, summary: body.summaries, prompt: body.prompts };
  if (!ids.observation.length && !ids.summary.length && !ids.prompt.length)
    throw new AppError(400, 'no_ids', 'Name at least one record to release.');
  const d = await writableTeamDb(env, auth.teamId);
  const r = await releaseHeld(d, { teamId: auth.teamId, ids, actorUserId: auth.userId, at: now });
  const released = { observations: r.observation, summaries: r.summary, prompts: r.prompt };
  // Named but not released: not held, already released, forgotten, or another team's (told apart by nobody).
  const missed = (asked: number[], done: number[]) => asked.filter((id) => !done.includes(id));
  const not_held = {
    observations: missed(ids.observation, r.observation),
    summaries: missed(ids.summary, r.summary),
    prompts: missed(ids.prompt, r.prompt),
  };
  return { released, not_held };
}

/** Mounted at /api/admin/release, under the admin guard (src/app.ts). */
export const releaseRoutes = new Hono<AppEnv>().post('/', jsonBody(ReleaseBody, 50_000), async (c) =>
  c.json(await release(c.env, c.get('auth'), c.req.valid('json'), Date.now())),
);
