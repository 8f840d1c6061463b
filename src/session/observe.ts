// Pure translation between the buffer's pending rows and the observer/store inputs of one turn.
import { relativeToRoots } from '#shared/paths';
import type { ParsedSummary, SummaryRequest, ToolEvent } from '../observer/types';
import type { ObservationContent } from '#shared/wire/records';
import type { FileIds, TurnContext, TurnRecord } from '../store/turn-store';
import { observationTimes } from './policy';
import type { PendingRow } from './types';

export function toToolEvent(r: PendingRow): ToolEvent {
  return {
    eventId: r.eventId,
    toolName: r.payload.toolName ?? 'Tool',
    toolInput: r.payload.toolInput ?? '',
    toolResponse: r.payload.toolResponse ?? '',
    cwd: r.payload.cwd ?? '',
    projectRoot: r.payload.projectRoot ?? null,
    toolUseId: r.payload.toolUseId ?? null,
    agentId: r.payload.agentId,
    agentType: r.payload.agentType,
    occurredAt: r.occurredAt,
    promptNumber: r.promptNumber,
  };
}

export function toSummaryRequest(r: PendingRow): SummaryRequest {
  return {
    eventId: r.eventId,
    lastAssistantMessage: r.payload.lastAssistantMessage ?? '',
    occurredAt: r.occurredAt,
    promptNumber: r.promptNumber,
  };
}

/** The filing context of a turn: every event of a batch shares it (see selectBatch). */
export function turnContext(head: PendingRow): TurnContext {
  const s = head.snapshot;
  return {
    teamId: s.teamId,
    projectId: s.projectId,
    sessionDbId: s.sessionDbId,
    promptNumber: head.promptNumber,
    promptId: null,
    authorUserId: s.userId,
    deviceId: s.deviceId,
    agentId: head.payload.agentId,
    agentType: head.payload.agentType,
  };
}

/**
 * The evidence ids of every file the batch's calls named, by root-relative path: the content as of the batch's last
 * call that saw the file, and the content before the batch's first change to it (its `base`).
 */
export function batchFileIds(batch: readonly PendingRow[]): FileIds {
  const out: FileIds = {};
  for (const r of batch) {
    for (const f of r.payload.fileIds ?? []) {
      const seen = out[f.path];
      const base = seen && seen.base !== undefined ? seen.base : f.base;
      out[f.path] = { blob: f.blob, ws: f.ws ?? null, ...(base !== undefined ? { base } : {}) };
    }
  }
  return out;
}

export function turnRecord(
  batch: readonly PendingRow[],
  observations: ObservationContent[],
  summary: ParsedSummary | null,
  tokens: number,
  ids: { generationId: string | null; turnKey: string; promptId: string | null; storedAt: number },
): TurnRecord {
  const times = observationTimes(
    batch.filter((r) => r.kind === 'observation').map((r) => r.occurredAt),
    observations.length,
  );
  const last = batch[batch.length - 1]!;
  const roots = batch.map((r) => r.payload.projectRoot ?? '').filter(Boolean);
  const portable = (o: ObservationContent): ObservationContent =>
    roots.length
      ? { ...o, filesRead: relativeToRoots(o.filesRead, roots), filesModified: relativeToRoots(o.filesModified, roots) }
      : o;
  const summaryRow = batch.find((r) => r.kind === 'summarize');
  // The checkout as of the turn's latest event that knew it: a commit made during the turn holds its work.
  const git = [...batch].reverse().find((r) => r.payload.gitBranch || r.payload.gitCommit)?.payload;
  return {
    context: {
      ...turnContext(batch[0]!),
      promptId: ids.promptId,
      gitBranch: git?.gitBranch ?? null,
      gitCommit: git?.gitCommit ?? null,
    },
    observations: observations.map((observation, i) => ({
      observation: portable(observation),
      createdAt: times[i] ?? last.occurredAt,
    })),
    summary: summary ? { summary, createdAt: (summaryRow ?? last).occurredAt } : null,
    discoveryTokens: tokens,
    fileIds: batchFileIds(batch),
    generationId: ids.generationId,
    turnKey: ids.turnKey,
    storedAt: ids.storedAt,
  };
}
