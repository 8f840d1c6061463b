// Writes one observer turn to D1 in a single batch: observations (deduplicated by content hash), their file
// index rows and the summary. The batch is all-or-nothing, so a turn is either stored whole or not at all.
import { redactionAudit, insertAudit } from '../db/audit';
import { runBatch, type BatchItem } from '../db/batch';
import { db, type Db } from '../db/client';
import { insertObservation, insertObservationFiles, type FileRef } from '../db/observations';
import { projectAtStoreTime } from '../db/sqlite';
import { insertSummary } from '../db/summaries';
import type { StoredNotice } from '../live/hub-do';
import type { ParsedSummary } from '../observer/types';
import type { ObservationContent } from '#shared/wire/records';
import { tallied, type RedactionTally } from '#shared/redact';
import { observationHash, summaryHash } from './hash';
import { overlayCheckout } from '../db/evidence';
import { fileEntry, fileKey } from '#shared/evidence';

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
  /** Branch and HEAD commit of the checkout at the turn's latest event that had them (null: unknown). */
  gitBranch?: string | null;
  gitCommit?: string | null;
}

/** A file's evidence ids by root-relative path, as the turn's tool events carried them (src/shared/evidence.ts). */
export type FileIds = Record<string, { blob: string | null; ws: string | null; base?: string | null }>;

export interface TurnRecord {
  context: TurnContext;
  /** The ids of files the turn's calls named (absent: none, or an older buffered turn). */
  fileIds?: FileIds;
  /** createdAt = when the underlying tool call happened, not when the observer answered. */
  observations: { observation: ObservationContent; createdAt: number }[];
  summary: { summary: ParsedSummary; createdAt: number } | null;
  /** Tokens the observer spent on this turn; spread over its observations. */
  discoveryTokens: number;
  generationId: string | null;
  /** Names the turn (the claim that first took its events); a replay of a stored turn is recognised by it. */
  turnKey: string | null;
  storedAt: number;
  /**
   * Observations the observer marked as the author's own preference or rule (their indices) and where they go: the
   * author's personal project and its manual session (store/personal.ts). Never filed under the session's project.
   */
  personal?: { indices: number[]; place: { projectId: number; sessionDbId: number } | null } | null;
}

export interface StoredTurn {
  teamId: number;
  /** Ids of rows inserted by this batch (duplicates of earlier writes are not repeated here). */
  observationIds: number[];
  /** The id of each of the turn's observations in order; null for one that met content already stored. */
  observationIdsByIndex?: (number | null)[];
  duplicates: number;
  summaryId: number | null;
  /** The prompt the turn was filed under (its row exists unless the prompt was private): embedded after the turn. */
  prompt: { sessionId: number; promptNumber: number };
  notices: StoredNotice[];
}

const MAX_PATH_CHARS = 1_000;

/**
 * Read and modified paths of one observation as index rows, cleaned and without repeats, each with the evidence
 * ids the turn's calls carried for it (a modified file's `base` only on its `modified` row).
 */
export function fileRows(o: ObservationContent, ids: FileIds = {}): FileRef[] {
  const out: FileRef[] = [];
  const seen = new Set<string>();
  const add = (raw: string, kind: 'read' | 'modified') => {
    const path = raw.trim();
    if (!path || path.length > MAX_PATH_CHARS || seen.has(`${kind}\u0000${path}`)) return;
    seen.add(`${kind}\u0000${path}`);
    const id = Object.hasOwn(ids, path) ? ids[path] : undefined;
    out.push(
      id
        ? {
            path,
            kind,
            blob: id.blob,
            ws: id.ws,
            ...(kind === 'modified' && id.base !== undefined ? { base: id.base } : {}),
          }
        : { path, kind },
    );
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

/** Stores one turn in one all-or-nothing batch; answers the new ids (repeats count as duplicates) and live notices. */
export async function storeTurn(d1: D1Database | Db, turn: TurnRecord): Promise<StoredTurn> {
  const d = db(d1);
  const plan = await planTurn(d, turn);
  const results = await runBatch(d, plan.queries);
  return storedFrom(turn, plan, results);
}

/** The turn's statements, and where in them the observation and summary inserts sit (their RETURNING rows). */
interface TurnPlan {
  queries: BatchItem[];
  observationAt: number[];
  /** The project each observation was filed in (the session's, or the author's personal one). */
  observationProject: number[];
  summaryAt: number | null;
}

async function planTurn(d: Db, turn: TurnRecord): Promise<TurnPlan> {
  const c = turn.context;
  // The project is read when the rows are stored (projectAtStoreTime): a merge since the snapshot moves them along.
  const place = {
    teamId: c.teamId,
    projectId: projectAtStoreTime(c.sessionDbId, c.projectId),
    sessionId: c.sessionDbId,
    promptNumber: c.promptNumber,
    authorUserId: c.authorUserId,
    deviceId: c.deviceId,
    promptId: c.promptId,
    turnKey: turn.turnKey,
  };
  const plan: TurnPlan = { queries: [], observationAt: [], observationProject: [], summaryAt: null };
  const personal = turn.personal && turn.personal.indices.length ? turn.personal : null;
  // The observer may repeat a secret it was shown (a client that skipped redaction): counted, then stored redacted.
  const tally: RedactionTally = {};
  const tokens = spreadTokens(turn.discoveryTokens, turn.observations.length);
  for (const [i, { observation: seen, createdAt }] of turn.observations.entries()) {
    // A personal note is about the person, not the checkout: no files, no branch, its own session (so the same
    // preference stated in two sessions is stored once).
    const mine = personal?.indices.includes(i) ?? false;
    const own = mine ? personal!.place : null;
    if (mine && !own) {
      // Its author is no longer a member: a personal note has nowhere to go, and never goes to the project.
      plan.observationAt.push(-1);
      plan.observationProject.push(c.projectId);
      continue;
    }
    const o = own ? { ...seen, filesRead: [], filesModified: [] } : seen;
    const sessionId = own ? own.sessionDbId : c.sessionDbId;
    const contentHash = await observationHash(sessionId, o);
    plan.observationAt.push(plan.queries.length);
    plan.observationProject.push(own ? own.projectId : c.projectId);
    plan.queries.push(
      insertObservation(
        d,
        {
          ...place,
          ...(own ? { projectId: own.projectId, sessionId, promptNumber: 0, promptId: null } : {}),
          agentId: c.agentId,
          agentType: c.agentType,
          generationId: turn.generationId,
          createdAt,
          storedAt: turn.storedAt,
          gitBranch: own ? null : (c.gitBranch ?? null),
          gitCommit: own ? null : (c.gitCommit ?? null),
          discoveryTokens: tokens[i] ?? 0,
          contentHash,
        },
        o,
        tally,
      ),
    );
    const files = fileRows(o, turn.fileIds);
    if (files.length) plan.queries.push(insertObservationFiles(d, sessionId, contentHash, files));
  }
  const summary = turn.summary;
  if (summary && isStorableSummary(summary.summary)) {
    const s = summary.summary;
    const contentHash = await summaryHash(c.sessionDbId, c.promptNumber, s);
    plan.summaryAt = plan.queries.length;
    plan.queries.push(
      insertSummary(
        d,
        { ...place, createdAt: summary.createdAt, contentHash },
        {
          request: s.request ?? '',
          investigated: s.investigated ?? '',
          learned: s.learned ?? '',
          completed: s.completed ?? '',
          nextSteps: s.nextSteps ?? '',
          notes: s.notes,
        },
        tally,
      ),
    );
  }
  if (tallied(tally))
    plan.queries.push(insertAudit(d, redactionAudit(c.teamId, c.authorUserId, 'observer', tally, turn.storedAt)));
  // What the turn's calls saw of the device's files is what its checkout holds now (until its next report).
  const seen = Object.entries(turn.fileIds ?? {});
  if (seen.length)
    plan.queries.push(
      overlayCheckout(
        d,
        { teamId: c.teamId, userId: c.authorUserId, deviceId: c.deviceId ?? 0 },
        c.projectId,
        Object.fromEntries(seen.map(([path, id]) => [fileKey(path), fileEntry({ ...id, missing: null })])),
      ),
    );
  return plan;
}

/** Reads the batch's RETURNING rows: an insert that returned nothing met content already stored. */
function storedFrom(turn: TurnRecord, plan: TurnPlan, results: unknown[]): StoredTurn {
  const c = turn.context;
  const stored: StoredTurn = {
    teamId: c.teamId,
    observationIds: [],
    observationIdsByIndex: [],
    duplicates: 0,
    summaryId: null,
    prompt: { sessionId: c.sessionDbId, promptNumber: c.promptNumber },
    notices: [],
  };
  const firstRow = <R>(at: number) => (results[at] as R[] | undefined)?.[0];
  for (const [i, at] of plan.observationAt.entries()) {
    if (at < 0) {
      stored.observationIdsByIndex!.push(null);
      continue;
    }
    const row = firstRow<{ id: number; type: string; title: string | null; createdAt: number }>(at);
    stored.observationIdsByIndex!.push(row?.id ?? null);
    if (!row) {
      stored.duplicates++;
      continue;
    }
    stored.observationIds.push(row.id);
    stored.notices.push({
      kind: 'observation',
      projectId: plan.observationProject[i] ?? c.projectId,
      id: row.id,
      sessionId: c.sessionDbId,
      type: row.type,
      title: row.title,
      createdAt: row.createdAt,
      authorUserId: c.authorUserId,
    });
  }
  const summary = plan.summaryAt === null ? undefined : firstRow<{ id: number }>(plan.summaryAt);
  if (summary && turn.summary) {
    stored.summaryId = summary.id;
    stored.notices.push({
      kind: 'summary',
      projectId: c.projectId,
      id: summary.id,
      sessionId: c.sessionDbId,
      createdAt: turn.summary.createdAt,
      authorUserId: c.authorUserId,
    });
  }
  return stored;
}
