// Per-isolate memo of good token verdicts, so a busy hook stream does not pay a D1 read per event.
//
// The window: a verdict is reused for at most TOKEN_CACHE_MS. A token revoked (or a member removed, a scope
// or team setting changed) through another isolate takes effect here within that window; through this
// isolate it takes effect at once, because every admin write clears the memo (see `forgetAllTokens`).
// Only good verdicts are kept: unknown, revoked and expired tokens are looked up (and audited) every time,
// and a random-token flood cannot push good entries out. A cached token still expires on time: its
// `expires_at` is checked against `now` on every use.
import type { TokenCheck } from './tokens';

export const TOKEN_CACHE_MS = 30_000;
const MAX_ENTRIES = 5_000;

type Good = Extract<TokenCheck, { ok: true }>;
interface Entry {
  check: Good;
  cachedUntil: number;
}

const entries = new Map<string, Entry>();

/** Looks a token hash up in the memo first; `load` reads D1 on a miss. `now` is passed in (tests move it). */
export async function cachedTokenCheck(
  hash: string,
  now: number,
  load: () => Promise<TokenCheck>,
): Promise<TokenCheck> {
  const hit = entries.get(hash);
  if (hit && hit.cachedUntil > now) {
    if (hit.check.expiresAt !== null && hit.check.expiresAt <= now) {
      entries.delete(hash);
      return {
        ok: false,
        reason: 'expired',
        teamId: hit.check.auth.teamId,
        tokenId: hit.check.auth.tokenId,
        userId: hit.check.auth.userId,
      };
    }
    return hit.check;
  }
  if (hit) entries.delete(hash);
  const check = await load();
  if (check.ok) {
    // Maps iterate in insertion order: dropping the first key evicts the oldest entry.
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    entries.set(hash, { check, cachedUntil: now + TOKEN_CACHE_MS });
  }
  return check;
}

/** Records that last_used_at was just written, so the next cached use does not write it again. */
export function noteTokenUsed(hash: string, at: number): void {
  const hit = entries.get(hash);
  if (hit) hit.check = { ...hit.check, lastUsedAt: at };
}

/** Drops every memoised verdict of this isolate (after any write that may change who a token is). */
export function forgetAllTokens(): void {
  entries.clear();
}
