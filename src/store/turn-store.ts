// Writes one observer turn to D1 in a single batch: observations (deduplicated by content hash), their file
// index rows and the summary. The batch is all-or-nothing, so a turn is either stored whole or not at all.
import { cjkTerms } from '../lib/cjk';
import type { StoredNotice } from '../live/hub-do';
import type { ParsedObservation, ParsedSummary } from '../observer/types';
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
  observations: { observation: ParsedObservation; createdAt: number }[];
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

/**
 * The project a turn's rows are filed under, read when they are stored: the session's project now (a merge
 * moves sessions, so events buffered before it, or replayed from a dead letter after it, follow), else the
 * snapshot's. Binds: session row id, snapshot project id.
 */
export const PROJECT_AT_STORE_TIME = '(SELECT COALESCE((SELECT project_id FROM sessions WHERE id = ?), ?))';

/** Read and modified paths of one observation as index rows, cleaned and without repeats. */
export function fileRows(o: ParsedObservation): { path: string; kind: 'read' | 'modified' }[] {
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

export async function storeTurn(db: D1Database, turn: TurnRecord): Promise<StoredTurn> {
  const c = turn.context;
  const stmts: D1PreparedStatement[] = [];
  const obsIndex: number[] = [];
  const tokens = spreadTokens(turn.discoveryTokens, turn.observations.length);

  for (const [i, { observation: o, createdAt }] of turn.observations.entries()) {
    const hash = await observationHash(c.sessionDbId, o);
    obsIndex.push(stmts.length);
    stmts.push(
      db
        .prepare(
          `INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, subtitle, facts, narrative, concepts,
              files_read, files_modified, cjk_terms, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id,
              agent_id, agent_type, generation_id, prompt_id, turn_key)
           VALUES (?, ${PROJECT_AT_STORE_TIME}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(session_id, content_hash) DO NOTHING RETURNING id, type, title, created_at`,
        )
        .bind(
          c.teamId, c.sessionDbId, c.projectId, c.sessionDbId, c.promptNumber, o.type, o.title, o.subtitle, JSON.stringify(o.facts), o.narrative,
          JSON.stringify(o.concepts), JSON.stringify(o.filesRead), JSON.stringify(o.filesModified),
          cjkTerms(o.title, o.subtitle, o.narrative, ...o.facts, ...o.concepts), createdAt, turn.storedAt, tokens[i] ?? 0, hash,
          c.authorUserId, c.deviceId, c.agentId, c.agentType, turn.generationId, c.promptId, turn.turnKey,
        ),
    );
    const files = fileRows(o);
    // One statement per observation whatever its file count: the rows travel as one JSON parameter, which
    // keeps every statement far below D1's 100 bound parameters. The id is looked up by hash, so rows of an
    // observation stored by an earlier attempt are completed too.
    if (files.length) {
      stmts.push(
        db
          .prepare(
            `INSERT OR IGNORE INTO observation_files (observation_id, team_id, project_id, path, kind)
             SELECT o.id, o.team_id, o.project_id, json_extract(j.value, '$.path'), json_extract(j.value, '$.kind')
               FROM observations o, json_each(?1) j
              WHERE o.session_id = ?2 AND o.content_hash = ?3`,
          )
          .bind(JSON.stringify(files), c.sessionDbId, hash),
      );
    }
  }

  let summaryAt = -1;
  if (turn.summary && isStorableSummary(turn.summary.summary)) {
    const s = turn.summary.summary;
    summaryAt = stmts.length;
    stmts.push(
      db
        .prepare(
          `INSERT INTO summaries (team_id, project_id, session_id, prompt_number, request, investigated, learned, completed, next_steps,
              notes, cjk_terms, created_at, content_hash, author_user_id, device_id, prompt_id, turn_key)
           VALUES (?, ${PROJECT_AT_STORE_TIME}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(session_id, content_hash) DO NOTHING RETURNING id`,
        )
        .bind(
          c.teamId, c.sessionDbId, c.projectId, c.sessionDbId, c.promptNumber, s.request ?? '', s.investigated ?? '', s.learned ?? '', s.completed ?? '',
          s.nextSteps ?? '', s.notes, cjkTerms(s.request, s.investigated, s.learned, s.completed, s.nextSteps, s.notes),
          turn.summary.createdAt, await summaryHash(c.sessionDbId, c.promptNumber, s), c.authorUserId, c.deviceId, c.promptId, turn.turnKey,
        ),
    );
  }

  const stored: StoredTurn = { teamId: c.teamId, observationIds: [], duplicates: 0, summaryId: null, notices: [] };
  if (stmts.length === 0) return stored;
  const results = await db.batch(stmts);
  for (const at of obsIndex) {
    const row = (results[at]?.results as { id: number; type: string; title: string | null; created_at: number }[] | undefined)?.[0];
    if (!row) {
      stored.duplicates++;
      continue;
    }
    stored.observationIds.push(row.id);
    stored.notices.push({
      kind: 'observation', projectId: c.projectId, id: row.id, sessionId: c.sessionDbId, type: row.type, title: row.title,
      createdAt: row.created_at, authorUserId: c.authorUserId,
    });
  }
  if (summaryAt >= 0) {
    const row = (results[summaryAt]?.results as { id: number }[] | undefined)?.[0];
    if (row) {
      stored.summaryId = row.id;
      stored.notices.push({ kind: 'summary', projectId: c.projectId, id: row.id, sessionId: c.sessionDbId, createdAt: turn.summary!.createdAt, authorUserId: c.authorUserId });
    }
  }
  return stored;
}
