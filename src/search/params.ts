// Search parameters: one zod schema for HTTP query strings and MCP tool arguments, and their SQL filters.
import { z } from 'zod';
import type { SqlFragment } from '../db/visibility';

const MAX_LIST = 10;

/** A value that may arrive once, repeated, or comma-separated; empty items dropped, capped at 10. */
const list = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => {
    const raw = v === undefined ? [] : Array.isArray(v) ? v : [v];
    return [...new Set(raw.flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean))];
  })
  .refine((v) => v.length <= MAX_LIST, { message: `at most ${MAX_LIST} values` });

/** ISO date/time or milliseconds since the epoch. */
const instant = z
  .union([z.string(), z.number()])
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    const ms = typeof v === 'number' || /^\d{10,}$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: 'custom', message: 'expected an ISO date or milliseconds since the epoch' });
      return z.NEVER;
    }
    return ms;
  });

const int = (min: number, max: number, dflt: number) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return dflt;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

export const SearchParams = z.object({
  q: z.string().max(1000, 'at most 1000 characters').optional().transform((s) => s?.trim() || undefined),
  project: list,
  type: list,
  concept: list,
  file: list,
  author: list,
  /** The agent the record's session ran in (claude-code, codex, gemini, …). */
  platform: list,
  since: instant,
  until: instant,
  limit: int(1, 100, 20),
  offset: int(0, 900, 0),
  /** `fts` skips the vector side (exact keyword search); default `hybrid` uses it when available. */
  mode: z.enum(['hybrid', 'fts']).optional().default('hybrid'),
  /** What to search: observations (default), session summaries, user prompts, or all three merged by RRF. */
  kind: z.enum(['observations', 'summaries', 'prompts', 'all']).optional().default('observations'),
});
export type SearchParams = z.infer<typeof SearchParams>;
export type SearchInput = z.input<typeof SearchParams>;
export type SearchKind = SearchParams['kind'];

/** The kind of one stored record a result points at. */
export type RecordKind = 'observation' | 'summary' | 'prompt';

/** The record kinds a `kind` parameter asks for, in the order their lists are fused. */
export function kindsOf(kind: SearchKind): RecordKind[] {
  if (kind === 'all') return ['observation', 'summary', 'prompt'];
  return [kind === 'summaries' ? 'summary' : kind === 'prompts' ? 'prompt' : 'observation'];
}

/** type, concept and file describe observations only: giving one excludes summaries and prompts. */
export const appliesTo = (p: SearchParams, kind: RecordKind) =>
  kind === 'observation' || p.type.length + p.concept.length + p.file.length === 0;

export const hasFilter = (p: SearchParams) =>
  p.project.length + p.type.length + p.concept.length + p.file.length + p.author.length + p.platform.length > 0 || p.since !== undefined || p.until !== undefined;

/**
 * A list is bound as ONE parameter (a JSON array read with json_each), never one `?` per value: D1 refuses
 * statements over 100 bound parameters, and 10 project keys (each key, alias and shadow) plus every filter at
 * 10 values used to pass that and answer 500.
 */
const IN_LIST = 'IN (SELECT value FROM json_each(?))';
const asList = (values: readonly (string | number)[]) => JSON.stringify(values);

/**
 * Filters other than visibility, on the record table aliased `alias` (observations `o` by default). Anonymous
 * `?` placeholders only, to combine with the shared visibility fragment. The observation-only filters (type,
 * concept, file) are left out for other tables; callers drop those kinds first (see `appliesTo`).
 */
export function filterSql(p: SearchParams, projectIds: number[] | null, kind: RecordKind = 'observation', alias = 'o'): SqlFragment {
  const a = alias;
  const parts: string[] = [];
  const params: (string | number)[] = [];
  if (projectIds) {
    parts.push(`${a}.project_id ${IN_LIST}`);
    params.push(asList(projectIds));
  }
  if (kind === 'observation' && p.type.length) {
    parts.push(`${a}.type ${IN_LIST}`);
    params.push(asList(p.type));
  }
  if (kind === 'observation' && p.concept.length) {
    parts.push(`EXISTS (SELECT 1 FROM json_each(${a}.concepts) c WHERE c.value ${IN_LIST})`);
    params.push(asList(p.concept));
  }
  if (kind === 'observation' && p.file.length) {
    // Stored paths may be absolute or relative: accept the same path or one that ends with "/<given>".
    parts.push(
      `EXISTS (SELECT 1 FROM observation_files f, json_each(?) g WHERE f.observation_id = ${a}.id
          AND (f.path = g.value OR substr(f.path, -length(g.value) - 1) = '/' || g.value))`,
    );
    params.push(asList(p.file.map((file) => file.replace(/^\.\//, ''))));
  }
  if (p.author.length) {
    parts.push(`${a}.author_user_id IN (SELECT id FROM users WHERE team_id = ${a}.team_id AND handle ${IN_LIST})`);
    params.push(asList(p.author));
  }
  if (p.platform.length) {
    parts.push(`${a}.session_id IN (SELECT id FROM sessions WHERE team_id = ${a}.team_id AND platform ${IN_LIST})`);
    params.push(asList(p.platform));
  }
  if (p.since !== undefined) {
    parts.push(`${a}.created_at >= ?`);
    params.push(p.since);
  }
  if (p.until !== undefined) {
    parts.push(`${a}.created_at <= ?`);
    params.push(p.until);
  }
  return { sql: parts.length ? parts.join(' AND ') : '1', params };
}
