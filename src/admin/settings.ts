// Admin API, team settings (validated patch over teams.settings JSON) and the audit log reader.
import { Hono } from 'hono';
import * as z from 'zod';
import { parseTeamSettings } from '../db/team-settings';
import type { AppEnv } from '../auth/types';
import { CAPTURE_MODES } from '#shared/capture';
import { Name } from '../lib/names';
import { jsonBody, lineField, query } from '../lib/validate';
import { auditPage, teamSettingsText, writeTeamSettings } from '../db/teams';
import { directoryDb, teamDb, teamDbs } from '../db/shards';
import { configOf } from '../config';
import { AppError } from '../lib/errors';
import { maskedSettings, webhookRefusal } from '../digest/webhook';

const Word = lineField(100);
const List = (max: number) => z.array(Word).max(max);
/** `{project key: value}` for at most 100 projects (project_writers, capture_projects). */
const PerProject = <T extends z.ZodType>(value: T) =>
  z
    .record(
      z
        .string()
        .trim()
        .min(1)
        .max(500)
        // biome-ignore lint/suspicious/noControlCharactersInRegex: a project key is one printable line
        .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'a project key is one printable line'),
      value,
    )
    .refine((r) => Object.keys(r).length <= 100, 'at most 100 projects');

/**
 * Every key an admin may set, strictly checked. `null` removes a key (back to the server default).
 * Readers (`src/db/team-settings.ts`, `serverGate`) use the same names.
 */
export const SettingsPatch = z
  .object({
    mode: z
      .string()
      .trim()
      .regex(/^[a-z0-9][a-z0-9_-]{0,99}$/, 'a mode id such as "code" or "code--zh"')
      .nullable(),
    context_observations: z.number().int().min(0).max(500).nullable(),
    context_sessions: z.number().int().min(0).max(100).nullable(),
    context_full_count: z.number().int().min(0).max(50).nullable(),
    observation_types: List(50).nullable(),
    observation_concepts: List(50).nullable(),
    skipped_tools: List(200).nullable(),
    excluded_projects: z.array(lineField(500)).max(200).nullable(),
    share_sensitive: z.boolean().nullable(),
    rate_limit_ingest_per_min: z.number().int().min(1).max(100_000).nullable(),
    rate_limit_read_per_min: z.number().int().min(1).max(100_000).nullable(),
    observer_budget_tokens_per_day: z.number().int().min(1).max(1e12).nullable(),
    observer_budget_tokens_per_month: z.number().int().min(1).max(1e12).nullable(),
    retention_days: z.number().int().min(1).max(36_500).nullable(),
    consolidation: z.enum(['auto', 'review']).nullable(),
    project_writers: PerProject(z.array(Name).max(200)).nullable(),
    capture: z.enum(CAPTURE_MODES).nullable(),
    capture_projects: PerProject(z.enum(CAPTURE_MODES)).nullable(),
    /** The digest's receiver (https; http on 127.0.0.1 only in local runs: checked with the config) and schedule. */
    digest_webhook_url: z.string().trim().min(1).max(2_000).nullable(),
    digest_schedule: z.enum(['daily', 'weekly']).nullable(),
    fade_after_days: z.number().int().min(1).max(36_500).nullable(),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof SettingsPatch>;

export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z.coerce.number().int().min(1).optional(),
  // Action names are dotted snake case; anything else cannot match and is refused before it reaches SQL.
  action: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[a-z0-9_.-]+$/, 'an action name such as token or token.revoke')
    .optional(),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

/** Applies a patch: set keys replace, null keys are removed, absent keys stay. */
export function applySettingsPatch(current: Record<string, unknown>, patch: SettingsPatch): Record<string, unknown> {
  const next = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  return next;
}

async function readSettings(db: D1Database, teamId: number): Promise<Record<string, unknown>> {
  return parseTeamSettings(await teamSettingsText(db, teamId)) as Record<string, unknown>;
}

interface AuditRow {
  id: number;
  created_at: number;
  actor: string | null;
  action: string;
  target: string | null;
  detail: string;
}

export const adminSettingsRoutes = new Hono<AppEnv>()
  .get('/settings', async (c) =>
    c.json({ settings: maskedSettings(await readSettings(directoryDb(c.env), c.get('auth').teamId)) }),
  )

  .patch('/settings', jsonBody(SettingsPatch, 100_000), async (c) => {
    const auth = c.get('auth');
    const patch = c.req.valid('json');
    const url = patch.digest_webhook_url;
    const refused = typeof url === 'string' ? webhookRefusal(url, configOf(c.env).local) : null;
    if (refused) throw new AppError(400, 'invalid_webhook', `digest_webhook_url: ${refused}.`);
    const h = await teamDbs(c.env, auth.teamId);
    const next = applySettingsPatch(await readSettings(h.dir, auth.teamId), patch);
    const now = Date.now();
    await writeTeamSettings(h, next, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'settings.update',
      target: 'team',
      // The webhook URL is a credential: the audit row names its host only.
      detail: { changed: maskedSettings(patch) },
      at: now,
    });
    return c.json({ settings: maskedSettings(next) });
  })

  .get('/audit', query(AuditQuery), async (c) => {
    const auth = c.get('auth');
    const q = c.req.valid('query');
    const results: AuditRow[] = await auditPage(await teamDb(c.env, auth.teamId), auth.teamId, q);
    const entries = results.map((r) => ({ ...r, detail: safeJson(r.detail) }));
    const last = entries.at(-1);
    return c.json({ entries, next_before: entries.length === q.limit && last ? last.id : null });
  });

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
