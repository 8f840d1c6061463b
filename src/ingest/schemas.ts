// Wire shapes of the ingest API (zod at the edge); one name for each schema and its type.
import * as z from 'zod';
import type { WireEndEvent, WireInitEvent, WireObservationEvent, WireSummarizeEvent } from '#shared/wire/events';
import { MAX_BATCH_EVENTS, MAX_TODO_CHARS, MAX_WIRE_TODOS } from '#shared/wire/events';
import { isBranchName, isCommitId, MAX_BRANCH_CHARS } from '#shared/git';
import { inertLine } from '#shared/inert';
import { lineField } from '../lib/validate';
import { MAX_EVENT_FILE_IDS } from '#shared/wire/events';
import { isBlobId, isWsId } from '#shared/evidence';
import { isServerSessionKey } from '../db/write-policy';

export { MAX_BATCH_EVENTS, type EventAck, type EventKind } from '#shared/wire/events';

/** ISO-8601 string or ms epoch → ms epoch. Years before 2000 or past 2100 are refused as clock garbage. */
export const OccurredAt = z.union([z.number().finite(), z.string().min(1).max(64)]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms) || ms < 946_684_800_000 || ms > 4_102_444_800_000) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 time or a millisecond epoch' });
    return z.NEVER;
  }
  return Math.floor(ms);
});
export type OccurredAt = z.infer<typeof OccurredAt>;

/** Tool payloads: what Claude Code sends is an object, a string or a list. */
export const ToolPayload = z.union([z.record(z.string(), z.unknown()), z.string(), z.array(z.unknown())]);
export type ToolPayload = z.infer<typeof ToolPayload>;

const id = (max: number) => lineField(max);

export const EventBase = z.object({
  event_id: id(200),
  // `manual:` sessions hold what `remember` stores, `import:` ones what an import filed; only the server makes them.
  session_id: id(200).refine(
    (v) => !isServerSessionKey(v),
    'session ids starting with "manual:" or "import:" are made by the server',
  ),
  project: id(500),
  cwd: z.string().max(4_096).default(''),
  occurred_at: OccurredAt,
  platform: id(50).default('claude-code'),
  /** The git top-level (or cwd) on the client: file paths under it are stored relative to it. */
  project_root: z.string().max(4_096).optional(),
  /** Claude Code's id of the prompt this event belongs to (2.1.x payloads carry it); absent from older clients. */
  prompt_id: id(200).optional(),
  /** The client's per-machine counter: orders one machine's events even when their clocks tie. */
  client_seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  /** The checkout's branch (src/shared/git.ts rule: git's usual characters, ≤ 200) and HEAD commit (40/64 hex). */
  git_branch: z
    .string()
    .max(MAX_BRANCH_CHARS)
    .refine(isBranchName, 'expected a git branch name (letters, digits, . _ / + @ # -)')
    .optional(),
  git_commit: z
    .string()
    .max(64)
    .refine(isCommitId, 'expected a full commit id (40 or 64 lower-case hex digits)')
    .optional(),
});
export type EventBase = z.infer<typeof EventBase>;

export const InitEvent = EventBase.extend({
  kind: z.literal('init').default('init'),
  prompt: z.string().default(''),
  private: z.boolean().default(false),
});
export type InitEvent = z.infer<typeof InitEvent>;

const blobId = z.string().max(64).refine(isBlobId, 'expected a blob id (40 or 64 lower-case hex digits)');

/** The ids of one file the call read or changed (src/shared/evidence.ts); a path as stored: relative, no `..`. */
export const FileId = z.object({
  path: z
    .string()
    .trim()
    .min(1)
    .max(1_000)
    .refine(
      (p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p) && !p.split('/').includes('..') && !p.includes('\0'),
      'expected a relative path',
    ),
  blob: blobId.nullable(),
  ws: z.string().max(16).refine(isWsId, 'expected 16 lower-case hex digits').optional(),
  base: blobId.nullish(),
});
export type FileId = z.infer<typeof FileId>;

export const ObservationEvent = EventBase.extend({
  kind: z.literal('observation').default('observation'),
  tool_name: id(200),
  tool_input: ToolPayload.optional(),
  tool_response: ToolPayload.nullable().optional(),
  tool_use_id: z.string().max(200).transform(inertLine).nullish(),
  agent_id: z.string().max(200).transform(inertLine).nullish(),
  agent_type: z.string().max(200).transform(inertLine).nullish(),
  file_ids: z.array(FileId).max(MAX_EVENT_FILE_IDS).optional(),
});
export type ObservationEvent = z.infer<typeof ObservationEvent>;

export const SummarizeEvent = EventBase.extend({
  kind: z.literal('summarize').default('summarize'),
  last_assistant_message: z.string().default(''),
  agent_id: z.string().max(200).nullish(),
  /** The agent's unfinished todos at this Stop (stored as the session's `todos` row: src/store/session-notes.ts). */
  todos: z
    .array(
      z.object({
        text: z.string().trim().min(1).max(MAX_TODO_CHARS),
        status: z.enum(['pending', 'in_progress']),
      }),
    )
    .max(MAX_WIRE_TODOS)
    .optional(),
});
export type SummarizeEvent = z.infer<typeof SummarizeEvent>;

export const EndEvent = EventBase.extend({
  kind: z.literal('end').default('end'),
  reason: z.string().max(200).nullish(),
});
export type EndEvent = z.infer<typeof EndEvent>;

export type IngestEvent = InitEvent | ObservationEvent | SummarizeEvent | EndEvent;

export const EVENT_SCHEMAS = {
  init: InitEvent,
  observation: ObservationEvent,
  summarize: SummarizeEvent,
  end: EndEvent,
} as const;

/** Spool replay: the events are checked one by one so that one bad event does not refuse the others. */
export const EventBatch = z.object({
  events: z.array(z.unknown()).min(1).max(MAX_BATCH_EVENTS),
});
export type EventBatch = z.infer<typeof EventBatch>;

// The client's wire types must stay acceptable to these schemas: a field renamed or retyped on one side
// and not the other fails the type check here.
type Fits<Wire, Schema extends z.ZodType> = Wire extends z.input<Schema> ? true : never;
export const WIRE_TYPES_FIT: [
  Fits<WireInitEvent, typeof InitEvent>,
  Fits<WireObservationEvent, typeof ObservationEvent>,
  Fits<WireSummarizeEvent, typeof SummarizeEvent>,
  Fits<WireEndEvent, typeof EndEvent>,
] = [true, true, true, true];
