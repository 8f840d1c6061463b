// The wire shapes of ingest events, as the hooks client sends them and the Worker answers them. Types only
// (plus two constants), so the client bundle stays free of zod; src/ingest/schemas.ts validates the same
// shapes at the edge and checks at compile time that these types still fit its schemas.

export const EVENT_KINDS = ['init', 'observation', 'summarize', 'end'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Events per POST /api/events/batch (spool replay). */
export const MAX_BATCH_EVENTS = 200;

/** A tool's input or response: what agents send is an object, a string or a list. */
export type WireToolPayload = Record<string, unknown> | string | unknown[];

/** Fields every event carries. */
export interface WireEventBase {
  /** Chosen by the client; a replay reuses it so the server can recognise repeats. */
  event_id: string;
  session_id: string;
  project: string;
  cwd?: string;
  /** ISO-8601 string or millisecond epoch. */
  occurred_at: string | number;
  platform?: string;
  /** The git top-level (or cwd) on the client: file paths under it are stored relative to it. */
  project_root?: string;
  /** The agent's own prompt id, when its payload has one (older clients omit it). */
  prompt_id?: string;
  /** Monotonic per machine: orders one machine's events when their clocks tie (older clients omit it). */
  client_seq?: number;
  /** The checkout's branch when the event happened (absent: detached HEAD, not a repository, older client). */
  git_branch?: string;
  /** The checkout's HEAD commit (40 or 64 lower-case hex) when the event happened. */
  git_commit?: string;
}

export interface WireInitEvent extends WireEventBase {
  kind?: 'init';
  prompt?: string;
  private?: boolean;
}

/** Ids sent with a tool event per file it read or changed (at most MAX_EVENT_FILE_IDS). */
export const MAX_EVENT_FILE_IDS = 20;

/**
 * The ids of one file a tool call read or changed, taken when the event happened (src/shared/evidence.ts): never
 * its content. `blob` null: the file did not exist; `base`: for a changed file, its blob id in the git index (the
 * content before the change), null when it was not there.
 */
export interface WireFileId {
  /** Relative to `project_root`, `/` separators. */
  path: string;
  blob: string | null;
  ws?: string;
  base?: string | null;
}

export interface WireObservationEvent extends WireEventBase {
  kind?: 'observation';
  tool_name: string;
  tool_input?: WireToolPayload;
  tool_response?: WireToolPayload | null;
  tool_use_id?: string | null;
  agent_id?: string | null;
  agent_type?: string | null;
  /** Older clients, calls that touch no file and files outside the repository send none. */
  file_ids?: WireFileId[];
}

export interface WireSummarizeEvent extends WireEventBase {
  kind?: 'summarize';
  last_assistant_message?: string;
  agent_id?: string | null;
  /**
   * The agent's unfinished todos as its transcript holds them at this Stop (Claude Code's TodoWrite list or its
   * Task tools), for a handoff to another machine: absent when the agent kept none, [] when all are done.
   */
  todos?: WireTodo[];
}

/** One unfinished todo of the agent's list. */
export interface WireTodo {
  text: string;
  status: 'pending' | 'in_progress';
}

/** Todos a summarize event carries at most, and characters of each. */
export const MAX_WIRE_TODOS = 30;
export const MAX_TODO_CHARS = 300;

export interface WireEndEvent extends WireEventBase {
  kind?: 'end';
  reason?: string | null;
}

export type WireEvent = WireInitEvent | WireObservationEvent | WireSummarizeEvent | WireEndEvent;

/** What an accepted (or skipped) event answers. */
export interface EventAck {
  accepted: boolean;
  duplicate: boolean;
  skipped?: string;
  prompt_number?: number;
}

/** One entry of a batch answer: the event's ack, or why that one event was refused. */
export type BatchResult =
  | ({ event_id: string | null } & EventAck)
  | { event_id: string | null; error: { code: string; message: string } };
