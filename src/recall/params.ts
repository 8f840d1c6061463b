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
import { isBlobId, isWsId } from '#shared/evidence';
import { MAX_CHECKOUT_ENTRIES } from '#shared/wire/checkout';
import { SessionKey } from '../receipts/params';

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

const commitId = z
  .string()
  .max(64)
  .refine(isCommitId, { message: 'expected a full commit id (40 or 64 lower-case hex digits)' });
const historyList = z.array(z.string()).refine((v) => v.length <= MAX_HISTORY_COMMITS && v.every(isHistoryAbbrev), {
  message: `expected at most ${MAX_HISTORY_COMMITS} commits of ${HISTORY_ABBREV} lower-case hex digits`,
});

export const ContextQuery = z.object({
  project,
  session: SessionKey.optional(),
  observations: int(0, 500),
  sessions: int(0, 100),
  full: int(0, 50),
  tz: timeZone,
  /** The caller's checkout (src/shared/git.ts GitView): ranks rows of branches that never merged last, marked. */
  branch: branchName.optional(),
  head: commitId.optional(),
  trunk: branchName.optional(),
  history: z
    .string()
    .max(MAX_HISTORY_COMMITS * (HISTORY_ABBREV + 1))
    .optional()
    .transform((v) => (v ? v.split(',') : []))
    .pipe(historyList),
});
export type ContextQuery = z.infer<typeof ContextQuery>;

const digest = z.string().regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 digest (64 lower-case hex digits)');
const entryKey = z.string().regex(/^[fb][0-9a-f]{14}$/, 'expected an entry key (f or b and 14 hex digits)');
/** `-`, `<blob>:<ws>:<name keys>` (src/shared/evidence.ts fileEntry) or `0`/`1`/`d` for a branch. */
const entryValue = z
  .string()
  .max(64 + 1 + 16 + 1 + 16 * 15)
  .refine(
    (v) => {
      if (v === '-' || v === '0' || v === '1' || v === 'd') return true;
      const [blob = '', ws = '', names = '', ...rest] = v.split(':');
      return (
        rest.length === 0 &&
        isBlobId(blob) &&
        (ws === '' || isWsId(ws)) &&
        (names === '' || names === '?' || names.split(',').every((n) => /^[0-9a-f]{14}$/.test(n)))
      );
    },
    { message: 'expected -, 0, 1, d or <blob>:<ws>:<name keys>' },
  );

/** The checkout report (src/shared/wire/checkout.ts WireCheckoutReport). */
export const CheckoutReport = z
  .object({
    digest,
    watch: digest.optional(),
    base: digest.optional(),
    set: z
      .record(entryKey, entryValue)
      .refine((v) => Object.keys(v).length <= MAX_CHECKOUT_ENTRIES, {
        message: `at most ${MAX_CHECKOUT_ENTRIES} entries`,
      })
      .optional(),
    drop: z.array(entryKey).max(MAX_CHECKOUT_ENTRIES).optional(),
  })
  .refine((r) => r.drop === undefined || r.base !== undefined, { message: 'drop needs a base' });
export type CheckoutReport = z.infer<typeof CheckoutReport>;

const count = (max: number) => z.number().int().min(0).max(max).optional();

/** POST /api/context: the query of GET /api/context as JSON, and the checkout report. */
export const ContextBody = z.object({
  project: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => [v].flat())
    .pipe(project),
  observations: count(500),
  sessions: count(100),
  full: count(50),
  tz: timeZone,
  git: z
    .object({
      branch: branchName.nullish(),
      head: commitId.nullish(),
      trunk: branchName.nullish(),
      history: historyList.optional(),
    })
    .nullish(),
  checkout: CheckoutReport.optional(),
  session: SessionKey.optional(),
});
export type ContextBody = z.infer<typeof ContextBody>;

export const FileContextQuery = z.object({
  project,
  session: SessionKey.optional(),
  path: z
    .array(z.string().max(1024, 'at most 1024 characters'))
    .transform((v) => v.map((s) => s.trim()).filter(Boolean))
    .refine((v) => v.length > 0 && v.length <= 10, { message: 'give 1 to 10 path values' }),
  cwd: z.string().max(1024).optional(),
  /** Older clients: the file's mtime (notes older than it are withheld). Newer ones send the file's ids instead. */
  mtime: int(0, 8.64e15),
  /** The file's ids as it is now (src/shared/evidence.ts): its notes are judged against them. */
  blob: z
    .string()
    .max(64)
    .refine(isBlobId, { message: 'expected a blob id (40 or 64 lower-case hex digits)' })
    .optional(),
  ws: z.string().max(16).refine(isWsId, { message: 'expected 16 lower-case hex digits' }).optional(),
  tz: timeZone,
});
export type FileContextQuery = z.infer<typeof FileContextQuery>;

export const PromptContextQuery = z.object({
  project,
  session: SessionKey.optional(),
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
