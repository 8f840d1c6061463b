// Search parameters: one zod schema for HTTP query strings and MCP tool arguments (the filters they give are
// applied in SQL by db/fts.ts, each list bound as ONE JSON parameter: D1 refuses statements over 100 bound
// parameters, and 10 project keys plus every filter at 10 values used to pass that and answer 500).
import * as z from 'zod';
import type { RecordKind } from '../db/fts';

const MAX_LIST = 10;

/** A value that may arrive once, repeated, or comma-separated; empty items dropped, capped at 10. */
const list = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => {
    const raw = v === undefined ? [] : Array.isArray(v) ? v : [v];
    return [
      ...new Set(
        raw
          .flatMap((s) => s.split(','))
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ];
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
  q: z
    .string()
    .max(1000, 'at most 1000 characters')
    .optional()
    .transform((s) => s?.trim() || undefined),
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
export type { RecordKind };

/** The record kinds a `kind` parameter asks for, in the order their lists are fused. */
export function kindsOf(kind: SearchKind): RecordKind[] {
  if (kind === 'all') return ['observation', 'summary', 'prompt'];
  return [kind === 'summaries' ? 'summary' : kind === 'prompts' ? 'prompt' : 'observation'];
}

/** type, concept and file describe observations only: giving one excludes summaries and prompts. */
export const appliesTo = (p: SearchParams, kind: RecordKind) =>
  kind === 'observation' || p.type.length + p.concept.length + p.file.length === 0;

export const hasFilter = (p: SearchParams) =>
  p.project.length + p.type.length + p.concept.length + p.file.length + p.author.length + p.platform.length > 0 ||
  p.since !== undefined ||
  p.until !== undefined;
