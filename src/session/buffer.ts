// The SessionDO's durable state in its own SQLite: pending events (claim → confirm), ids already seen,
// dead letters, prompts of this session, the turn lease and small counters. Synchronous SQL only.
import { migrateDoSqlite } from '../db/do-schema';
import { BUFFER_SCHEMA, toRow, type PendingSql } from './buffer-schema';
import type { PromptMark } from './filing';
import type { AfterStoreWork, BufferedEvent, EventSnapshot, PendingRow } from './types';

/** Ids of accepted events are remembered this long so that client retries are recognised. */
export const SEEN_RETENTION_MS = 3 * 24 * 3_600_000;
/** Prompt texts kept for the observer's session info; older prompts keep only what filing needs (no text). */
const PROMPTS_KEPT = 20;
/** `prompt_number` of an event that waits for its prompt's own event (see filing.ts). */
export const WAITING = -1;
/** Rows looked at when choosing a turn: far more than one turn takes (20), far fewer than a backlog can hold. */
const CANDIDATE_LIMIT = 200;

/** Events filed under the same key may share an observer turn: same project, prompt, author, device, agent. */
export const groupKey = (s: EventSnapshot, promptNumber: number, agentId: string | null) =>
  JSON.stringify([s.projectId, s.sessionDbId, promptNumber, s.userId, s.deviceId, agentId]);

export class EventBuffer {
  /**
   * `instance` names the object instance that uses the buffer (made in its constructor): a turn's lease is
   * live only for the instance that took it. A Durable Object has at most one live instance, so a lease
   * written by another one belongs to a turn that died with it (a restart, a deploy, an eviction).
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly instance: string,
  ) {
    migrateDoSqlite(sql, BUFFER_SCHEMA);
  }

  // --- meta -------------------------------------------------------------------------------------------
  get<T>(key: string, fallback: T): T {
    const row = this.sql.exec<{ v: string }>('SELECT v FROM meta WHERE k = ?', key).toArray()[0];
    return row ? (JSON.parse(row.v) as T) : fallback;
  }

  set(key: string, value: unknown): void {
    this.sql.exec(
      'INSERT INTO meta (k, v) VALUES (?1, ?2) ON CONFLICT(k) DO UPDATE SET v = ?2',
      key,
      JSON.stringify(value),
    );
  }

  bump(key: string, by = 1): void {
    this.set(key, this.get<number>(key, 0) + by);
  }

  // --- dedupe and prompts -------------------------------------------------------------------------------
  seenPrompt(eventId: string): number | null {
    const row = this.sql
      .exec<{ prompt_number: number }>('SELECT prompt_number FROM seen WHERE event_id = ?', eventId)
      .toArray()[0];
    return row ? row.prompt_number : null;
  }

  markSeen(eventId: string, promptNumber: number, now: number): void {
    this.sql.exec(
      'INSERT OR IGNORE INTO seen (event_id, prompt_number, seen_at) VALUES (?, ?, ?)',
      eventId,
      promptNumber,
      now,
    );
  }

  /** The last prompt number given out (prompts of a session emptied by retention count via `prompt_base`). */
  currentPrompt(): number {
    const n = this.sql.exec<{ n: number | null }>('SELECT MAX(prompt_number) AS n FROM prompts').one().n ?? 0;
    return Math.max(n, this.get<number>('prompt_base', 0));
  }

  addPrompt(p: PromptMark, text: string): void {
    this.sql.exec(
      'INSERT OR IGNORE INTO prompts (prompt_number, private, text, occurred_at, prompt_id, client_seq) VALUES (?, ?, ?, ?, ?, ?)',
      p.promptNumber,
      p.private ? 1 : 0,
      p.private ? '' : text,
      p.occurredAt,
      p.promptId,
      p.clientSeq,
    );
    // Old prompts stay as marks (late events must still find them, private ones above all); only the text goes.
    this.sql.exec(
      "UPDATE prompts SET text = '' WHERE prompt_number <= ? AND text != ''",
      p.promptNumber - PROMPTS_KEPT,
    );
  }

  prompt(promptNumber: number): { private: boolean; text: string; promptId: string | null } | null {
    const row = this.sql
      .exec<{ private: number; text: string; prompt_id: string | null }>(
        'SELECT private, text, prompt_id FROM prompts WHERE prompt_number = ?',
        promptNumber,
      )
      .toArray()[0];
    return row ? { private: row.private === 1, text: row.text, promptId: row.prompt_id } : null;
  }

  /** Every prompt of the session as filing sees it, in arrival order. */
  promptMarks(): PromptMark[] {
    return this.sql
      .exec<{
        prompt_number: number;
        prompt_id: string | null;
        occurred_at: number;
        client_seq: number | null;
        private: number;
      }>('SELECT prompt_number, prompt_id, occurred_at, client_seq, private FROM prompts ORDER BY prompt_number')
      .toArray()
      .map((r) => ({
        promptNumber: r.prompt_number,
        promptId: r.prompt_id,
        occurredAt: r.occurred_at,
        clientSeq: r.client_seq,
        private: r.private === 1,
      }));
  }

  promptById(promptId: string): number | null {
    const row = this.sql
      .exec<{ prompt_number: number }>('SELECT prompt_number FROM prompts WHERE prompt_id = ?', promptId)
      .toArray()[0];
    return row ? row.prompt_number : null;
  }

  /**
   * Events a newly arrived prompt may claim: those that name it, and those that happened at or after its
   * start (they may have been filed under an earlier prompt, or be waiting). Payloads are not loaded.
   */
  refileCandidates(promptId: string | null, since: number): PendingRow[] {
    return this.sql
      .exec<PendingSql>(
        `SELECT seq, event_id, kind, 'null' AS payload, chars, occurred_at, prompt_number, snapshot, group_key, attempts, deaths, last_error, claim_id,
                prompt_id, client_seq, turn_key
           FROM pending WHERE occurred_at >= ? OR (prompt_id IS NOT NULL AND prompt_id = ?)`,
        since,
        promptId ?? '',
      )
      .toArray()
      .map(toRow);
  }

  /** Files a buffered event under another prompt (or back to waiting). */
  refile(seq: number, promptNumber: number, groupKey: string): void {
    this.sql.exec('UPDATE pending SET prompt_number = ?, group_key = ? WHERE seq = ?', promptNumber, groupKey, seq);
  }

  /** Drops a buffered event for good (its prompt turned out private): it is never shown to the observer. */
  drop(seq: number): void {
    this.sql.exec('DELETE FROM pending WHERE seq = ?', seq);
  }

  /** Waiting events that have waited since before `cutoff` (their prompt's event never came). */
  overdueWaiting(cutoff: number): PendingRow[] {
    return this.sql
      .exec<PendingSql>(
        `SELECT seq, event_id, kind, 'null' AS payload, chars, occurred_at, prompt_number, snapshot, group_key, attempts, deaths, last_error, claim_id,
                prompt_id, client_seq, turn_key
           FROM pending WHERE prompt_number = ? AND received_at < ?`,
        WAITING,
        cutoff,
      )
      .toArray()
      .map(toRow);
  }

  /** When the oldest waiting event arrived, or null when none waits. */
  oldestWaiting(): number | null {
    return this.sql
      .exec<{ t: number | null }>('SELECT MIN(received_at) AS t FROM pending WHERE prompt_number = ?', WAITING)
      .one().t;
  }

  /** Events a turn may take now (filed, not waiting). */
  readyCount(): number {
    return this.sql
      .exec<{ n: number }>('SELECT COUNT(*) AS n FROM pending WHERE prompt_number != ? AND claim_id IS NULL', WAITING)
      .one().n;
  }

  /** Events a turn may take now: how many, their characters, and when the oldest of them arrived (null: none). */
  ready(): { count: number; chars: number; oldestAt: number | null } {
    const row = this.sql
      .exec<{ n: number; chars: number | null; t: number | null }>(
        'SELECT COUNT(*) AS n, SUM(chars) AS chars, MIN(received_at) AS t FROM pending WHERE prompt_number != ? AND claim_id IS NULL',
        WAITING,
      )
      .one();
    return { count: row.n, chars: row.chars ?? 0, oldestAt: row.t };
  }

  /** Current prompt numbers of the given events (missing ones were dropped). */
  filedUnder(seqs: number[]): Map<number, number> {
    const rows = this.sql
      .exec<{ seq: number; prompt_number: number }>(
        'SELECT seq, prompt_number FROM pending WHERE seq IN (SELECT value FROM json_each(?))',
        JSON.stringify(seqs),
      )
      .toArray();
    return new Map(rows.map((r) => [r.seq, r.prompt_number]));
  }

  // --- pending events -------------------------------------------------------------------------------------
  insert(e: BufferedEvent, promptNumber: number, now: number): void {
    const chars = e.kind === 'observation' ? e.toolInput.length + e.toolResponse.length : e.lastAssistantMessage.length;
    const git = { gitBranch: e.git?.branch ?? null, gitCommit: e.git?.commit ?? null };
    const payload =
      e.kind === 'observation'
        ? {
            toolName: e.toolName,
            toolInput: e.toolInput,
            toolResponse: e.toolResponse,
            cwd: e.cwd,
            projectRoot: e.projectRoot,
            toolUseId: e.toolUseId,
            agentId: e.agentId,
            agentType: e.agentType,
            ...git,
            ...(e.fileIds?.length ? { fileIds: e.fileIds } : {}),
          }
        : { lastAssistantMessage: e.lastAssistantMessage, agentId: e.agentId ?? null, agentType: null, ...git };
    this.sql.exec(
      `INSERT INTO pending (event_id, kind, payload, chars, occurred_at, received_at, prompt_number, snapshot, group_key, prompt_id, client_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      e.eventId,
      e.kind,
      JSON.stringify(payload),
      chars,
      e.occurredAt,
      now,
      promptNumber,
      JSON.stringify(e.snapshot),
      groupKey(e.snapshot, promptNumber, payload.agentId ?? null),
      e.promptId ?? null,
      e.clientSeq ?? null,
    );
  }

  /**
   * The first candidates for the next turn, in the order a turn considers them, without their payloads:
   * a long back-off can pile up thousands of events and only a turn's worth is ever needed in memory.
   */
  candidates(limit = CANDIDATE_LIMIT): PendingRow[] {
    return this.sql
      .exec<PendingSql>(
        `SELECT seq, event_id, kind, 'null' AS payload, chars, occurred_at, prompt_number, snapshot, group_key, attempts, deaths, last_error, claim_id,
                prompt_id, client_seq, turn_key
           FROM pending WHERE prompt_number != ? ORDER BY prompt_number, kind = 'summarize', seq LIMIT ?`,
        WAITING,
        limit,
      )
      .toArray()
      .map(toRow);
  }

  /** Full rows (payload included) of the chosen events, oldest first. */
  load(seqs: number[]): PendingRow[] {
    if (seqs.length === 0) return [];
    return this.sql
      .exec<PendingSql>(
        'SELECT * FROM pending WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq',
        JSON.stringify(seqs),
      )
      .toArray()
      .map(toRow);
  }

  counts(liveClaim: string | null): { pending: number; inFlight: number } {
    const row = this.sql
      .exec<{ total: number; claimed: number }>(
        'SELECT COUNT(*) AS total, COALESCE(SUM(claim_id IS NOT NULL AND claim_id = ?), 0) AS claimed FROM pending',
        liveClaim ?? '',
      )
      .one();
    return { pending: row.total - row.claimed, inFlight: row.claimed };
  }

  /**
   * Claims events for a turn. `turnKey` names the turn in D1 (stored with its rows): a turn that died after
   * its store is formed again from the same events under the same key, so it is recognised as stored.
   */
  claim(claimId: string, seqs: number[], turnKey: string): void {
    for (const seq of seqs)
      this.sql.exec('UPDATE pending SET claim_id = ?, turn_key = ? WHERE seq = ?', claimId, turnKey, seq);
  }

  /** The events of a turn that was claimed and may have been stored before it died, if any waits. */
  unfinishedTurn(): { turnKey: string; seqs: number[] } | null {
    const head = this.sql
      .exec<{ turn_key: string }>(
        'SELECT turn_key FROM pending WHERE turn_key IS NOT NULL AND claim_id IS NULL ORDER BY seq LIMIT 1',
      )
      .toArray()[0];
    if (!head) return null;
    const seqs = this.sql
      .exec<{ seq: number }>(
        'SELECT seq FROM pending WHERE turn_key = ? AND claim_id IS NULL ORDER BY seq',
        head.turn_key,
      )
      .toArray()
      .map((r) => r.seq);
    return { turnKey: head.turn_key, seqs };
  }

  /** Claims left behind by a turn that died are given back (only called when no live lease exists). */
  releaseStaleClaims(): number {
    return this.sql.exec('UPDATE pending SET claim_id = NULL WHERE claim_id IS NOT NULL').rowsWritten;
  }

  /** Deletes the events of a claim: only called once their results are committed (or deliberately dropped). */
  confirm(claimId: string): number {
    return this.sql.exec('DELETE FROM pending WHERE claim_id = ?', claimId).rowsWritten;
  }

  /**
   * Gives a claim back for a later turn; `countAttempt` spends one try of each event's retry budget.
   * `mayBeStored`: the turn failed at or after its D1 write, so it keeps its turn key (see `claim`);
   * otherwise nothing was stored and the events may form new turns.
   */
  release(claimId: string, countAttempt: boolean, error: string, mayBeStored = false): void {
    this.sql.exec(
      `UPDATE pending SET claim_id = NULL, attempts = attempts + ?, last_error = ?, turn_key = CASE WHEN ? THEN turn_key ELSE NULL END
        WHERE claim_id = ?`,
      countAttempt ? 1 : 0,
      error.slice(0, 500),
      mayBeStored ? 1 : 0,
      claimId,
    );
  }

  /** Moves events that spent their retry budget to the dead-letter table; returns how many moved. */
  deadLetter(maxAttempts: number, now: number): number {
    return this.#toDeadLetters(
      this.sql
        .exec<PendingSql>('SELECT * FROM pending WHERE attempts >= ? AND claim_id IS NULL', maxAttempts)
        .toArray(),
      now,
    );
  }

  /** Moves the events of a claim to the dead-letter table, `reason` as their last error; returns how many moved. */
  deadLetterClaim(claimId: string, reason: string, now: number): number {
    const rows = this.sql.exec<PendingSql>('SELECT * FROM pending WHERE claim_id = ?', claimId).toArray();
    return this.#toDeadLetters(
      rows.map((r) => ({ ...r, last_error: reason })),
      now,
    );
  }

  #toDeadLetters(rows: PendingSql[], now: number): number {
    for (const r of rows) {
      const payload = JSON.parse(r.payload) as { toolName?: string };
      this.sql.exec(
        `INSERT OR REPLACE INTO dead_letters (event_id, kind, tool_name, payload, snapshot, occurred_at, prompt_number, attempts, last_error, failed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        r.event_id,
        r.kind,
        payload.toolName ?? null,
        r.payload,
        r.snapshot,
        r.occurred_at,
        r.prompt_number,
        r.attempts + r.deaths,
        r.last_error,
        now,
      );
      this.sql.exec('DELETE FROM pending WHERE seq = ?', r.seq);
    }
    return rows.length;
  }

  /** What the session reports to its team with each slot request: pending events, the oldest's arrival, dead letters. */
  backlog(): { pending: number; oldestAt: number | null; deadLetters: number } {
    const r = this.sql
      .exec<{ n: number; t: number | null; dead: number }>(
        'SELECT COUNT(*) AS n, MIN(received_at) AS t, (SELECT COUNT(*) FROM dead_letters) AS dead FROM pending',
      )
      .one();
    return { pending: r.n, oldestAt: r.t, deadLetters: r.dead };
  }

  /** Events (pending and dead-lettered) whose snapshots name D1 rows. */
  snapshotCount(): number {
    return this.sql
      .exec<{ n: number }>('SELECT (SELECT COUNT(*) FROM pending) + (SELECT COUNT(*) FROM dead_letters) AS n')
      .one().n;
  }

  /** Every snapshot held (pending and dead-lettered events), for a team move to re-point them. */
  snapshots(): EventSnapshot[] {
    return this.sql
      .exec<{ snapshot: string }>('SELECT snapshot FROM pending UNION SELECT snapshot FROM dead_letters')
      .toArray()
      .map((r) => JSON.parse(r.snapshot) as EventSnapshot);
  }

  /** Rewrites every held snapshot through `map` (a team move: the rows' ids on the new database), group keys with them. */
  remapSnapshots(map: (s: EventSnapshot) => EventSnapshot): number {
    let n = 0;
    for (const r of this.sql
      .exec<{ seq: number; snapshot: string; prompt_number: number; payload: string }>(
        'SELECT seq, snapshot, prompt_number, payload FROM pending',
      )
      .toArray()) {
      const next = map(JSON.parse(r.snapshot) as EventSnapshot);
      const agentId = (JSON.parse(r.payload) as { agentId?: string | null }).agentId ?? null;
      this.sql.exec(
        'UPDATE pending SET snapshot = ?, group_key = ? WHERE seq = ?',
        JSON.stringify(next),
        groupKey(next, r.prompt_number, agentId),
        r.seq,
      );
      n++;
    }
    for (const r of this.sql
      .exec<{ event_id: string; snapshot: string }>('SELECT event_id, snapshot FROM dead_letters')
      .toArray()) {
      this.sql.exec(
        'UPDATE dead_letters SET snapshot = ? WHERE event_id = ?',
        JSON.stringify(map(JSON.parse(r.snapshot) as EventSnapshot)),
        r.event_id,
      );
      n++;
    }
    return n;
  }

  /** No event, dead letter, prompt text, observer conversation or after-store work: nothing of the session's text. */
  holdsNothing(): boolean {
    const r = this.sql
      .exec<{ n: number }>(
        `SELECT (SELECT COUNT(*) FROM pending) + (SELECT COUNT(*) FROM dead_letters) + (SELECT COUNT(*) FROM after_store)
              + (SELECT COUNT(*) FROM prompts WHERE text != '') AS n`,
      )
      .one();
    return r.n === 0 && this.get<unknown>('conversation', null) === null;
  }

  deadLetterCount(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM dead_letters').one().n;
  }

  deadLetters(limit = 50): {
    event_id: string;
    kind: string;
    tool_name: string | null;
    attempts: number;
    last_error: string | null;
    failed_at: number;
  }[] {
    return this.sql
      .exec<{
        event_id: string;
        kind: string;
        tool_name: string | null;
        attempts: number;
        last_error: string | null;
        failed_at: number;
      }>(
        'SELECT event_id, kind, tool_name, attempts, last_error, failed_at FROM dead_letters ORDER BY failed_at DESC LIMIT ?',
        limit,
      )
      .toArray();
  }

  /** Puts every dead letter back in the queue with a fresh retry budget (after an operator fixed the cause). */
  requeueDeadLetters(now: number): number {
    const rows = this.sql
      .exec<{
        event_id: string;
        kind: string;
        payload: string;
        snapshot: string;
        occurred_at: number;
        prompt_number: number;
      }>('SELECT event_id, kind, payload, snapshot, occurred_at, prompt_number FROM dead_letters ORDER BY occurred_at')
      .toArray();
    for (const r of rows) {
      const payload = JSON.parse(r.payload) as { agentId?: string | null };
      this.sql.exec(
        `INSERT OR IGNORE INTO pending (event_id, kind, payload, chars, occurred_at, received_at, prompt_number, snapshot, group_key)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        r.event_id,
        r.kind,
        r.payload,
        r.payload.length,
        r.occurred_at,
        now,
        r.prompt_number,
        r.snapshot,
        groupKey(JSON.parse(r.snapshot) as EventSnapshot, r.prompt_number, payload.agentId ?? null),
      );
      this.sql.exec('DELETE FROM dead_letters WHERE event_id = ?', r.event_id);
    }
    return rows.length;
  }

  pruneSeen(now: number): void {
    this.sql.exec(
      'DELETE FROM seen WHERE seen_at < ? AND event_id NOT IN (SELECT event_id FROM pending)',
      now - SEEN_RETENTION_MS,
    );
  }

  // --- work after a stored turn --------------------------------------------------------------------------
  /**
   * Notes a stored turn's after-store work (its rows' vectors) before it starts: written in the same
   * synchronous step as the turn's confirm, so a turn is never confirmed without it. Answers its id.
   */
  addAfterStore(stored: AfterStoreWork, now: number): number {
    return this.sql
      .exec<{ id: number }>(
        'INSERT INTO after_store (stored, created_at) VALUES (?, ?) RETURNING id',
        JSON.stringify(stored),
        now,
      )
      .one().id;
  }

  afterStoreDone(id: number): void {
    this.sql.exec('DELETE FROM after_store WHERE id = ?', id);
  }

  /** After-store work not known to be finished, oldest first. */
  afterStoreLeft(limit = 20): { id: number; stored: AfterStoreWork }[] {
    return this.sql
      .exec<{ id: number; stored: string }>('SELECT id, stored FROM after_store ORDER BY id LIMIT ?', limit)
      .toArray()
      .map((r) => ({ id: r.id, stored: JSON.parse(r.stored) as AfterStoreWork }));
  }

  // --- the turn lease -------------------------------------------------------------------------------------
  /** The live turn's lease: taken by this instance and not expired (a turn of this instance that hung). */
  lease(now: number): { claimId: string; expiresAt: number } | null {
    const row = this.sql
      .exec<{ claim_id: string; expires_at: number }>(
        'SELECT claim_id, expires_at FROM lease WHERE id = 1 AND instance_id IS ?',
        this.instance,
      )
      .toArray()[0];
    return row && row.expires_at > now ? { claimId: row.claim_id, expiresAt: row.expires_at } : null;
  }

  takeLease(claimId: string, expiresAt: number): void {
    this.sql.exec(
      'INSERT INTO lease (id, claim_id, expires_at, instance_id) VALUES (1, ?1, ?2, ?3) ON CONFLICT(id) DO UPDATE SET claim_id = ?1, expires_at = ?2, instance_id = ?3',
      claimId,
      expiresAt,
      this.instance,
    );
  }

  dropLease(claimId: string): void {
    this.sql.exec('DELETE FROM lease WHERE claim_id = ? AND instance_id IS ?', claimId, this.instance);
  }

  /**
   * A new instance's first step: a lease taken by an earlier instance, and every claim, belong to a turn that
   * died with it. Both are given back (claims keep their turn key: that turn may have been stored, see
   * `claim`), and each claimed event counts the death: the claim, written before the observer was asked, is
   * the durable record of that attempt. Answers how many events were claimed.
   */
  releaseDeadTurn(): number {
    this.sql.exec('DELETE FROM lease WHERE instance_id IS NOT ?', this.instance);
    return this.sql.exec('UPDATE pending SET claim_id = NULL, deaths = deaths + 1 WHERE claim_id IS NOT NULL')
      .rowsWritten;
  }
}
