// What the ingest routes hand to a SessionDO, and what the DO keeps per pending event.

/** Where an event is filed, captured when it is enqueued (later prompts or moves do not change it). */
export interface EventSnapshot {
  teamId: number;
  sessionKey: string;
  sessionDbId: number;
  projectId: number;
  projectKey: string;
  userId: number;
  deviceId: number | null;
}

interface Common {
  eventId: string;
  /** ms epoch on the client: observation time = event time. */
  occurredAt: number;
  snapshot: EventSnapshot;
  /** Observer mode of the team when the event arrived (e.g. `code--zh`). */
  modeId: string;
  /** The agent's own id of the prompt the event belongs to, when the client sent one. */
  promptId?: string | null;
  /** The client's per-machine event counter, when sent: breaks ties of occurredAt. */
  clientSeq?: number | null;
  /** The checkout's branch and HEAD commit when the event happened, as the client sent them. */
  git?: GitAt | null;
}

export interface GitAt {
  branch: string | null;
  commit: string | null;
}

export interface InitInput extends Common {
  kind: 'init';
  /** Stripped prompt text; ignored when private. */
  prompt: string;
  private: boolean;
}

/** A file's evidence ids as a tool event carried them (src/shared/wire/events.ts WireFileId). */
export interface FileIdAt {
  path: string;
  blob: string | null;
  ws?: string | null;
  base?: string | null;
}

export interface ObservationInput extends Common {
  kind: 'observation';
  /** Absent from older clients and events buffered before evidence. */
  fileIds?: FileIdAt[];
  toolName: string;
  toolInput: string;
  toolResponse: string;
  cwd: string;
  projectRoot: string | null;
  toolUseId: string | null;
  agentId: string | null;
  agentType: string | null;
}

export interface SummarizeInput extends Common {
  kind: 'summarize';
  lastAssistantMessage: string;
  agentId: string | null;
}

export interface EndInput extends Common {
  kind: 'end';
}

export type EnqueueInput = InitInput | ObservationInput | SummarizeInput | EndInput;
/** The kinds that wait in the buffer for an observer turn. */
export type BufferedEvent = ObservationInput | SummarizeInput;

export interface EnqueueResult {
  accepted: boolean;
  duplicate: boolean;
  /** The prompt the event is filed under (for init: the number it was given). */
  promptNumber: number;
  skipped?: 'private' | 'subagent_summary';
}

export interface PendingPayload {
  toolName?: string;
  toolInput?: string;
  toolResponse?: string;
  cwd?: string;
  projectRoot?: string | null;
  toolUseId?: string | null;
  agentId: string | null;
  agentType: string | null;
  lastAssistantMessage?: string;
  /** Absent in events buffered before branch-aware memory. */
  gitBranch?: string | null;
  gitCommit?: string | null;
  /** Absent in events buffered before evidence (issue 34) and from older clients. */
  fileIds?: FileIdAt[];
}

export interface PendingRow {
  seq: number;
  eventId: string;
  kind: 'observation' | 'summarize';
  payload: PendingPayload;
  chars: number;
  occurredAt: number;
  promptNumber: number;
  snapshot: EventSnapshot;
  groupKey: string;
  attempts: number;
  /** Turns this event was in when the object died (the next instance counts them). */
  deaths: number;
  lastError: string | null;
  claimId: string | null;
  /** The agent's own id of the prompt the event names, when the client sent one. */
  promptId: string | null;
  clientSeq: number | null;
  /** The turn that claimed this event last and may have stored it (see EventBuffer.claim). */
  turnKey: string | null;
}

/** What a stored turn's after-store work needs again if it is cut off: the rows to index (no live notices). */
export interface AfterStoreWork {
  teamId: number;
  observationIds: number[];
  summaryId: number | null;
  prompt: { sessionId: number; promptNumber: number };
}

export interface DeadLetterInfo {
  event_id: string;
  kind: string;
  tool_name: string | null;
  attempts: number;
  last_error: string | null;
  failed_at: number;
}

export interface SessionStatus {
  pending: number;
  in_flight: number;
  turns: number;
  observations_stored: number;
  dead_letters: DeadLetterInfo[];
  backoff_until: number | null;
  last_error: string | null;
}
