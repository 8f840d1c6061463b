// Writes one observer turn to D1 in a single batch: observations (deduplicated by content hash), their file
// index rows and the summary. The batch is all-or-nothing, so a turn is either stored whole or not at all.
import { runBatch, type BatchItem } from '../db/batch';
import { db, type Db } from '../db/client';
import { insertObservation, insertObservationFiles } from '../db/observations';
import { projectAtStoreTime } from '../db/sqlite';
import { insertSummary } from '../db/summaries';
import type { StoredNotice } from '../live/hub-do';
import type { ObservationContent, ParsedSummary } from '../observer/types';
import { observationHash, summaryHash } from './hash';

/** Where a turn's rows are filed: the snapshot taken when its events were enqueued. */
export interface TurnContext {
  teamId: number;
  projectId: number;
  sessionDbId: number;
  promptNumber: number;
  /** The agent's own id of that prompt, when its client sent one. */
  promptId: string | null;
  authorUserId: number;
  deviceId: number | null;
  agentId: string | null;
  agentType: string | null;
}

export interface TurnRecord {
  context: TurnContext;
  /** createdAt = when the underlying tool call happened, not when the observer answered. */
  observations: { observation: ObservationContent; createdAt: number }[];
  summary: { summary: ParsedSummary; createdAt: number } | null;
  /** Tokens the observer spent on this turn; spread over its observations. */
  discoveryTokens: number;
  generationId: string | null;
  /** Names the turn (the claim that first took its events); a replay of a stored turn is recognised by it. */
  turnKey: string | null;
  storedAt: number;
}

export interface StoredTurn {
  teamId: number;
  /** Ids of rows inserted by this batch (duplicates of earlier writes are not repeated here). */
  observationIds: number[];
  duplicates: number;
  summaryId: number | null;
  notices: StoredNotice[];
}

const MAX_PATH_CHARS = 1_000;


/** Read and modified paths of one observation as index rows, cleaned and without repeats. */
export function fileRows(o: ObservationContent): { path: string; kind: 'read' | 'modified' }[] {
  const out: { path: string; kind: 'read' | 'modified' }[] = [];
  const seen = new Set<string>();
  const add = (raw: string, kind: 'read' | 'modified') => {
    const path = raw.trim();
    if (!path || path.length > MAX_PATH_CHARS || seen.has(`${kind}\u0000${path}`)) return;
    seen.add(`${kind}\u0000${path}`);
    out.push({ path, kind });
  };
  for (const p of o.filesModified) add(p, 'modified');
  for (const p of o.filesRead) add(p, 'read');
  return out;
}

/** Spreads a turn's token cost over its observations; the remainder goes to the first ones. */
export function spreadTokens(total: number, n: number): number[] {
  if (n <= 0) return [];
  const t = Math.max(0, Math.floor(total));
  const base = Math.floor(t / n);
  return Array.from({ length: n }, (_, i) => base + (i < t % n ? 1 : 0));
}

/** A summary that says nothing (or was skipped by the observer) is not stored. */
export function isStorableSummary(s: ParsedSummary): boolean {
  if (s.skipped) return false;
  return [s.request, s.investigated, s.learned, s.completed, s.nextSteps].some((v) => (v ?? '').trim() !== '');
}

export async function storeTurn(d1: D1Database | Db, turn: TurnRecord): Promise<StoredTurn> {
  const d = db(d1);
  const c = turn.context;
  const queries: BatchItem[] = [];
  const obsIndex: number[] = [];
  const tokens = spreadTokens(turn.discoveryTokens, turn.observations.length);
  // The project is read when the rows are stored (projectAtStoreTime): a merge since the snapshot moves them along.
  const place = { teamId: c.teamId, projectId: projectAtStoreTime(c.sessionDbId, c.projectId), sessionId: c.sessionDbId, promptNumber: c.promptNumber, authorUserId: c.authorUserId, deviceId: c.deviceId };

  for (const [i, { observation: o, createdAt }] of turn.observations.entries()) {
    const contentHash = await observationHash(c.sessionDbId, o);
    obsIndex.push(queries.length);
    queries.push(
      insertObservation(d, {
        ...place, agentId: c.agentId, agentType: c.agentType, generationId: turn.generationId, promptId: c.promptId, turnKey: turn.turnKey,
        createdAt, storedAt: turn.storedAt, discoveryTokens: tokens[i] ?? 0, contentHash,
      }, o),
    );
    const files = fileRows(o);
    if (files.length) queries.push(insertObservationFiles(d, c.sessionDbId, contentHash, files));
  }

  let summaryAt = -1;
  if (turn.summary && isStorableSummary(turn.summary.summary)) {
    const s = turn.summary.summary;
    summaryAt = queries.length;
    queries.push(
      insertSummary(
        d,
        {
          ...place, promptId: c.promptId, turnKey: turn.turnKey, createdAt: turn.summary.createdAt,
          contentHash: await summaryHash(c.sessionDbId, c.promptNumber, s),
        },
        {
          request: s.request ?? '', investigated: s.investigated ?? '', learned: s.learned ?? '', completed: s.completed ?? '',
          nextSteps: s.nextSteps ?? '', notes: s.notes,
        },
      ),
    );
  }

  const stored: StoredTurn = { teamId: c.teamId, observationIds: [], duplicates: 0, summaryId: null, notices: [] };
  const results = await runBatch(d, queries);
  for (const at of obsIndex) {
    const row = (results[at] as { id: number; type: string; title: string | null; createdAt: number }[] | undefined)?.[0];
    if (!row) {
      stored.duplicates++;
      continue;
    }
    stored.observationIds.push(row.id);
    stored.notices.push({
      kind: 'observation', projectId: c.projectId, id: row.id, sessionId: c.sessionDbId, type: row.type, title: row.title,
      createdAt: row.createdAt, authorUserId: c.authorUserId,
    });
  }
  if (summaryAt >= 0) {
    const row = (results[summaryAt] as { id: number }[] | undefined)?.[0];
    if (row) {
      stored.summaryId = row.id;
      stored.notices.push({ kind: 'summary', projectId: c.projectId, id: row.id, sessionId: c.sessionDbId, createdAt: turn.summary!.createdAt, authorUserId: c.authorUserId });
    }
  }
  return stored;
}
