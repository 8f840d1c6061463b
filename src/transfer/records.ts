// The NDJSON export format: one record a line, each with a `kind`. Rows refer to each other by what keeps its
// meaning in another team (project key, session key, user handle), never by database id; no token material.
// Handles follow the one name rule (lib/names.ts), wherever a record names a person. Fields added later are
// optional (a file written before them imports as before); what an admin's import may not claim (who released a
// held row, provenance) is read only by the operator's restore of a whole team (the move, a backup's restore).
import * as z from 'zod';
import { isBranchName, isCommitId, MAX_BRANCH_CHARS } from '#shared/git';
import { isBlobId, isWsId } from '#shared/evidence';
import { inertText } from '#shared/inert';
import { Name } from '../lib/names';

/**
 * A lone surrogate half (valid in JSON, not in UTF-8) is stored by D1 as U+FFFD: it becomes that here, so a key
 * matches its stored row when the same file is imported again (one linear pass).
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// Inert as well (src/shared/inert.ts): no control or bidi character of a file is stored, nor changes the key a
// second import of the same file matches. Handles are refused instead (Name): stripping one could name someone else.
const wellFormed = (s: string) => inertText(s.replace(LONE_SURROGATE, '\uFFFD'));
const text = (max: number, min = 0) => z.string().min(min).max(max).transform(wellFormed);
const time = z.number().int().nonnegative().max(8_640_000_000_000_000);
const list = z.array(z.string().max(4_000).transform(wellFormed)).max(200);
/** The checkout's branch and HEAD commit, by ingest's rule (src/shared/git.ts). */
const git = {
  git_branch: z.string().max(MAX_BRANCH_CHARS).refine(isBranchName, 'expected a git branch name').nullable().optional(),
  git_commit: z.string().max(64).refine(isCommitId, 'expected a full commit id').nullable().optional(),
};
/** Provenance and the hold-back's release, carried by a restore (an admin's import decides them itself). */
const kept = {
  imported_author: text(200).nullable().optional(),
  released_at: time.nullable().optional(),
  released_by: Name.nullable().optional(),
};

export const ProjectRecord = z.object({
  kind: z.literal('project'),
  key: text(500, 1),
  visibility: z.enum(['team', 'private']),
  owner: Name.nullable(),
  created_at: time,
});
export const UserRecord = z.object({
  kind: z.literal('user'),
  handle: Name,
  role: z.enum(['owner', 'admin', 'member', 'reader']),
  created_at: time,
});
export const SessionRecord = z.object({
  kind: z.literal('session'),
  session_key: text(200, 1),
  project: text(500, 1),
  user: Name,
  platform: text(50, 1),
  prompt_count: z.number().int().nonnegative(),
  started_at: time,
  ended_at: time.nullable(),
  ...git,
  imported_at: time.nullable().optional(),
  imported_author: text(200).nullable().optional(),
  /** When the session's object should have emptied itself (the session-retire job's order); a restore and a move
   * keep it, an admin's import of someone's file does not (its sessions never had an object here). */
  retire_after: time.nullable().optional(),
});
const inSession = {
  session_key: text(200, 1),
  prompt_number: z.number().int().nonnegative(),
  prompt_id: text(200).nullable(),
  author: Name,
  created_at: time,
  ...kept,
};
export const PromptRecord = z.object({ kind: z.literal('prompt'), ...inSession, text: text(100_000) });
/** A file's evidence ids as ingest takes them (src/shared/evidence.ts): git blob ids, a 16-hex whitespace id. */
const blobId = z.string().max(64).refine(isBlobId, 'expected a blob id').nullable();
const wsId = z.string().max(16).refine(isWsId, 'expected a whitespace id').nullable();
/**
 * `file_ids`: the evidence ids of the record's files by path (absent in older files: the rows get none). Paths as
 * the files lists allow them, made well-formed the same way so each meets its list's entry (rebuilt by
 * `Object.fromEntries`, so a path named `__proto__` stays a key). At most as many entries as the record has files.
 */
const fileIds = z
  .record(z.string().max(4_000), z.strictObject({ blob: blobId, ws: wsId, base: blobId }))
  .refine((r) => Object.keys(r).length <= 400, 'too many file_ids')
  .transform((r) => Object.fromEntries(Object.entries(r).map(([path, ids]) => [wellFormed(path), ids])));
export const ObservationRecord = z
  .object({
    kind: z.literal('observation'),
    ...inSession,
    type: text(60, 1),
    title: text(2_000).nullable(),
    subtitle: text(2_000).nullable(),
    facts: list,
    narrative: text(100_000).nullable(),
    concepts: list,
    files_read: list,
    files_modified: list,
    discovery_tokens: z.number().int().nonnegative(),
    content_hash: text(200, 1),
    agent_id: text(200).nullable(),
    agent_type: text(200).nullable(),
    source: text(50, 1),
    ...git,
    file_ids: fileIds.optional(),
  })
  .refine((o) => !o.file_ids || Object.keys(o.file_ids).length <= o.files_read.length + o.files_modified.length, {
    message: 'more file_ids than files',
    path: ['file_ids'],
  });
export const SummaryRecord = z.object({
  kind: z.literal('summary'),
  ...inSession,
  request: text(100_000),
  investigated: text(100_000),
  learned: text(100_000),
  completed: text(100_000),
  next_steps: text(100_000),
  notes: text(100_000).nullable(),
  content_hash: text(200, 1),
});

// The correction history, after every project's rows (a file from before it has none of these lines). An
// observation is named as the team move names it: by its session's key and its content hash.
const ref = { session_key: text(200, 1), content_hash: text(200, 1) };
/** `superseded_by` (to itself: outdated with nothing in its place) or `merged_into`. */
export const LinkRecord = z.object({
  kind: z.literal('link'),
  link: z.enum(['superseded_by', 'merged_into']),
  ...ref,
  to_session_key: text(200, 1),
  to_content_hash: text(200, 1),
});
/** `count` identical rows of observation_events (the same person's flag twice in a millisecond is two). */
export const EventRecord = z.object({
  kind: z.literal('event'),
  ...ref,
  action: text(40, 1),
  by_session_key: text(200, 1).nullable(),
  by_content_hash: text(200, 1).nullable(),
  actor_user: Name.nullable(),
  actor: text(40, 1),
  reason: text(4_000).nullable(),
  created_at: time,
  count: z.number().int().min(1).max(1_000),
  /** What an edit or a revert changed in the record's text (`{field: {from, to}}`); absent in older files. */
  changes: z
    .record(z.string(), z.object({ from: z.unknown(), to: z.unknown() }))
    .nullable()
    .optional(),
});
const counter = z.number().int().nonnegative().max(1_000_000_000);
/** An observation's feedback counts and review state (`pending`: flagged, out of the context index). */
export const SignalRecord = z.object({
  kind: z.literal('signal'),
  ...ref,
  fetched: counter,
  useful: counter,
  wrong: counter,
  outdated: counter,
  review: z.enum(['pending', 'kept', 'promoted']).nullable(),
  updated_at: time,
});

/**
 * A primed note someone forgot in `project` (prime_tombstones): its content hash, never its text, so priming the
 * project again where the file is imported does not store it again.
 */
export const TombstoneRecord = z.object({
  kind: z.literal('tombstone'),
  project: text(500, 1),
  hash: z.string().regex(/^[0-9a-f]{16,64}$/, 'expected a hex content hash'),
  created_at: time,
});

export const ExportRecord = z.discriminatedUnion('kind', [
  ProjectRecord,
  UserRecord,
  SessionRecord,
  PromptRecord,
  ObservationRecord,
  SummaryRecord,
  LinkRecord,
  EventRecord,
  SignalRecord,
  TombstoneRecord,
]);
export type ExportRecord = z.infer<typeof ExportRecord>;
