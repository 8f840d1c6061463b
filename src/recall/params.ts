// Query-string schemas of the recall routes (zod at the edge; one name for a schema and its type).
import * as z from 'zod';
import {
  HISTORY_ABBREV,
  isBranchName,
  isCommitId,
  isHistoryAbbrev,
  MAX_BRANCH_CHARS,
  MAX_HISTORY_COMMITS,
} from '#shared/git';
import { isTimeZone } from './format';

/** A value that may arrive once or repeated (also comma-separated for project keys); blanks dropped. */
const keys = (max: number) =>
  z
    .array(z.string())
    .transform((v) => [
      ...new Set(
        v
          .flatMap((s) => s.split(','))
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ])
    .refine((v) => v.length <= max, { message: `at most ${max} values` });

const int = (min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const timeZone = z
  .string()
  .optional()
  .transform((v) => v?.trim() || 'UTC')
  .refine((v) => v.length <= 64 && isTimeZone(v), { message: 'expected an IANA time zone such as Europe/Berlin' });

const project = keys(10).refine((v) => v.length > 0, { message: 'give at least one project key' });

const branchName = z
  .string()
  .max(MAX_BRANCH_CHARS)
  .refine(isBranchName, { message: 'expected a git branch name (letters, digits, . _ / + @ # -)' });

export const ContextQuery = z.object({
  project,
  observations: int(0, 500),
  sessions: int(0, 100),
  full: int(0, 50),
  tz: timeZone,
  /** The caller's checkout (src/shared/git.ts GitView): ranks rows of branches that never merged last, marked. */
  branch: branchName.optional(),
  head: z
    .string()
    .max(64)
    .refine(isCommitId, { message: 'expected a full commit id (40 or 64 lower-case hex digits)' })
    .optional(),
  trunk: branchName.optional(),
  history: z
    .string()
    .max(MAX_HISTORY_COMMITS * (HISTORY_ABBREV + 1))
    .optional()
    .transform((v) => (v ? v.split(',') : []))
    .refine((v) => v.length <= MAX_HISTORY_COMMITS && v.every(isHistoryAbbrev), {
      message: `expected at most ${MAX_HISTORY_COMMITS} comma-separated commits of ${HISTORY_ABBREV} lower-case hex digits`,
    }),
});
export type ContextQuery = z.infer<typeof ContextQuery>;

export const FileContextQuery = z.object({
  project,
  path: z
    .array(z.string().max(1024, 'at most 1024 characters'))
    .transform((v) => v.map((s) => s.trim()).filter(Boolean))
    .refine((v) => v.length > 0 && v.length <= 10, { message: 'give 1 to 10 path values' }),
  cwd: z.string().max(1024).optional(),
  mtime: int(0, 8.64e15),
  tz: timeZone,
});
export type FileContextQuery = z.infer<typeof FileContextQuery>;

export const PromptContextQuery = z.object({
  project,
  q: z
    .string()
    .max(4000, 'at most 4000 characters')
    .optional()
    .transform((v) => v ?? ''),
  tz: timeZone,
});
export type PromptContextQuery = z.infer<typeof PromptContextQuery>;

export const MAX_DEPTH = 50;
export const DEFAULT_DEPTH = 5;

export const TimelineQuery = z.object({
  anchor: z.string().max(64).optional(),
  q: z.string().max(1000).optional(),
  before: int(0, MAX_DEPTH),
  after: int(0, MAX_DEPTH),
  project: keys(10),
  format: z.enum(['json', 'text']).optional(),
  tz: timeZone,
});
export type TimelineQuery = z.infer<typeof TimelineQuery>;

/** GET /api/context/session: one session's record so far, by the agent's session id. */
export const SessionContextQuery = z.object({
  session: z.string().trim().min(1, 'give the session id').max(256, 'at most 256 characters'),
  max_chars: int(200, 9_500),
  format: z.enum(['json', 'text']).optional(),
  tz: timeZone,
});
export type SessionContextQuery = z.infer<typeof SessionContextQuery>;
