// Per-team settings stored as JSON in teams.settings: read tolerantly, one schema for every key we know.
import * as z from 'zod';
import { CAPTURE_MODES } from '#shared/capture';
import { eq } from 'drizzle-orm';
import type { Caller } from './caller';
import { db as dbOf, type Db } from './client';
import { teams } from './schema';

/**
 * Known keys. Unknown keys are kept (passthrough) so other areas can add theirs; a key with a bad value is
 * dropped rather than failing the request, because a typo in settings must not break recall.
 */
export const TeamSettings = z
  .object({
    /** Let every member see observations of type `sensitive`, not only their author. */
    share_sensitive: z.boolean().optional(),
    /** Context index defaults: newest N observations and M session summaries. */
    context_observations: z.number().int().min(0).max(500).optional(),
    context_sessions: z.number().int().min(0).max(100).optional(),
    /** Mode id (e.g. `code`, `code--zh`) used for type/concept allow-lists and icons. */
    mode: z.string().min(1).max(100).optional(),
    /** Set by the teams admin API (`PATCH /api/admin/settings`, strict schema in src/admin/settings.ts). */
    context_full_count: z.number().int().min(0).max(50).optional(),
    /** Allow-lists for the context index (null/absent = the mode's own lists). */
    observation_types: z.array(z.string()).optional(),
    observation_concepts: z.array(z.string()).optional(),
    /** Read by serverGate (src/gate/gate.ts): absent = default skip list; globs as in claude-mem §1.5. */
    skipped_tools: z.array(z.string()).optional(),
    excluded_projects: z.array(z.string()).optional(),
    /** Per-token requests/minute; may only lower the server's RATE_LIMIT_* values. */
    rate_limit_ingest_per_min: z.number().int().positive().optional(),
    rate_limit_read_per_min: z.number().int().positive().optional(),
    /** Observer tokens (every token the provider reports) per UTC day / month; past it, the heuristic observer. */
    observer_budget_tokens_per_day: z.number().int().positive().optional(),
    observer_budget_tokens_per_month: z.number().int().positive().optional(),
    /** Observations, summaries and prompts older than this many days are deleted daily (absent = kept). */
    retention_days: z.number().int().min(1).max(36_500).optional(),
    /** `review`: consolidation's merges and the observer's corrections wait for an admin (src/proposals/); absent = auto. */
    consolidation: z.enum(['auto', 'review']).optional(),
    /** Project key → the handles that may put records into it (db/write-policy.ts writeRefusal). */
    project_writers: z.record(z.string(), z.array(z.string())).optional(),
    /** The team's digest (src/digest/): posted to this Slack-compatible webhook, daily (default) or weekly. */
    digest_webhook_url: z.string().min(1).max(2_000).optional(),
    digest_schedule: z.enum(['daily', 'weekly']).optional(),
    /** Whether sessions are recorded (#shared/capture.ts): the team's mode, and per project key its own. */
    capture: z.enum(CAPTURE_MODES).optional(),
    capture_projects: z.record(z.string(), z.enum(CAPTURE_MODES)).optional(),
    /** A record none of the team used for this many days leaves the context index (absent = 90; src/db/fading.ts). */
    fade_after_days: z.number().int().min(1).max(36_500).optional(),
  })
  .passthrough();
export type TeamSettings = z.infer<typeof TeamSettings>;

/** Parses a settings JSON string, keeping each known key only if its value is valid. */
export function parseTeamSettings(raw: string | null | undefined): TeamSettings {
  let obj: unknown;
  try {
    obj = JSON.parse(raw ?? '{}');
  } catch {
    return {};
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj as Record<string, unknown>)) {
    const field = TeamSettings.shape[key as keyof typeof TeamSettings.shape];
    if (!field) {
      out[key] = value;
      continue;
    }
    const ok = field.safeParse(value);
    if (ok.success && ok.data !== undefined) out[key] = ok.data;
  }
  return out as TeamSettings;
}

export async function getTeamSettings(d1: D1Database | Db, teamId: number): Promise<TeamSettings> {
  const row = await dbOf(d1).select({ settings: teams.settings }).from(teams).where(eq(teams.id, teamId)).get();
  return parseTeamSettings(row?.settings);
}

/** The caller's team settings: those read with the token when present, else one D1 read. */
export async function settingsFor(
  db: D1Database | Db,
  auth: Pick<Caller, 'teamId' | 'settings'>,
): Promise<TeamSettings> {
  return auth.settings ?? getTeamSettings(db, auth.teamId);
}
