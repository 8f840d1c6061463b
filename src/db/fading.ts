// Use-based fading (issue 34): a record none of the team used within `fade_after_days` leaves the context index;
// search still finds it, marked faded, and nothing is deleted (retention alone deletes by age). A record's clock
// is the latest of when it was made, when it was stored or last used (`observations.renewed_at`: fetched, marked
// useful, injected and then fetched) and the database's `fade_epoch` (no use was recorded before it). Being judged
// `current` is not a use.
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Db } from './client';
import { db as dbOf } from './client';
import { fadeEpoch, observations } from './schema';
import { byIds } from './sqlite';
import type { TeamSettings } from './team-settings';

export const DEFAULT_FADE_AFTER_DAYS = 90;
const DAY_MS = 86_400_000;

/** Records whose clock is older than this have faded (team setting `fade_after_days`, default 90). Pure. */
export const fadeCutoff = (settings: Pick<TeamSettings, 'fade_after_days'>, now: number): number =>
  now - (settings.fade_after_days ?? DEFAULT_FADE_AFTER_DAYS) * DAY_MS;

/** When this database began recording use (migration 0027); 0 when the row is missing. One statement. */
export async function fadeEpochOf(d1: D1Database | Db): Promise<number> {
  const row = await dbOf(d1).select({ at: fadeEpoch.at }).from(fadeEpoch).where(eq(fadeEpoch.id, 1)).get();
  return row?.at ?? 0;
}

/**
 * The cutoff the context index applies, or null while nothing can have faded yet (the epoch is within the window:
 * every record's clock is at least the epoch).
 */
export const indexCutoff = (cutoff: number, epoch: number): number | null => (epoch >= cutoff ? null : cutoff);

/** Moves the clocks of the team's `ids` on to `at` (a use); ids of other teams are left alone. Batchable. */
export const renewRows = (d: Db, teamId: number, ids: readonly number[], at: number) =>
  d
    .update(observations)
    .set({ renewedAt: at })
    .where(
      and(
        byIds(observations.id, [...ids], eq(observations.teamId, teamId)),
        or(isNull(observations.renewedAt), lt(observations.renewedAt, at)),
      ),
    );
