// The team's write gate, kept by its TeamDO: for the last round of a team's move between databases
// (src/transfer/move-job.ts: it copies with the gate open, then closes it for what changed meanwhile) no write
// path (ingest, `remember`, import, …) takes anything for it, and the move knows which session objects may hold
// buffered events: every session that wrote through the gate is listed here until a move finds it quiet. The gate
// is a lease the move renews each step: a move that dies opens it again by itself.

/** How long a closed gate lasts without the move renewing it. */
export const GATE_LEASE_MS = 2 * 60_000;
/** What a refused writer is told to wait at most before trying again (seconds in Retry-After). */
export const GATE_RETRY_MS = 30_000;
/** Writers not seen for this long are dropped from the list (their session objects emptied long ago). */
const WRITER_STALE_MS = 30 * 24 * 60 * 60_000;

export const WRITE_GATE_SCHEMA = `CREATE TABLE write_gate (id INTEGER PRIMARY KEY CHECK (id = 1), move_id TEXT NOT NULL, until INTEGER NOT NULL);
   CREATE TABLE writers (session_key TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);
   CREATE TABLE placement (id INTEGER PRIMARY KEY CHECK (id = 1), shard TEXT NOT NULL, at INTEGER NOT NULL);`;

/**
 * A count the team's objects move each time sessions or projects are deleted (a forget of a session or a project):
 * writers key their memos of row ids by it, so no isolate keeps using the id of a row that is gone.
 */
export const ROW_EPOCH_SCHEMA = 'CREATE TABLE row_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);';

/**
 * The gate as a writer sees it: open (with the database the last move put the team on and when, both null for a
 * team never moved, and the row epoch), or closed until.
 */
export type GateAnswer =
  | { open: true; shard: string | null; placedAt: number | null; rowEpoch: number }
  | { open: false; retryAt: number };

export class WriteGate {
  /** Session keys known to be listed (saves a storage write per event). */
  readonly #known = new Set<string>();

  constructor(private readonly sql: SqlStorage) {}

  #closed(now: number): { moveId: string; until: number } | null {
    const row = this.sql
      .exec<{ move_id: string; until: number }>('SELECT move_id, until FROM write_gate WHERE id = 1')
      .toArray()[0];
    return row && row.until > now ? { moveId: row.move_id, until: row.until } : null;
  }

  /** A writer asks to write for `sessionKeys` (none: a write outside a session, e.g. import). */
  enter(sessionKeys: readonly string[], now: number): GateAnswer {
    const closed = this.#closed(now);
    if (closed) return { open: false, retryAt: Math.min(closed.until, now + GATE_RETRY_MS) };
    for (const key of sessionKeys) {
      if (this.#known.has(key)) continue;
      this.sql.exec(
        'INSERT INTO writers (session_key, seen_at) VALUES (?1, ?2) ON CONFLICT(session_key) DO UPDATE SET seen_at = ?2',
        key,
        now,
      );
      this.#known.add(key);
    }
    const placed = this.sql
      .exec<{ shard: string; at: number }>('SELECT shard, at FROM placement WHERE id = 1')
      .toArray()[0];
    const epoch = this.sql.exec<{ n: number }>('SELECT n FROM row_epoch WHERE id = 1').toArray()[0];
    return { open: true, shard: placed?.shard ?? null, placedAt: placed?.at ?? null, rowEpoch: epoch?.n ?? 0 };
  }

  /** Sessions or projects of the team were deleted: memos of their ids are not to be used again. */
  rowsDeleted(): void {
    this.sql.exec('INSERT INTO row_epoch (id, n) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1');
  }

  /**
   * Closes the gate for `moveId` (or renews its lease) and answers the sessions that wrote through it; refused
   * (null) while another move holds it.
   */
  close(moveId: string, now: number): string[] | null {
    const closed = this.#closed(now);
    if (closed && closed.moveId !== moveId) return null;
    this.sql.exec(
      'INSERT INTO write_gate (id, move_id, until) VALUES (1, ?1, ?2) ON CONFLICT(id) DO UPDATE SET move_id = ?1, until = ?2',
      moveId,
      now + GATE_LEASE_MS,
    );
    this.sql.exec('DELETE FROM writers WHERE seen_at < ?', now - WRITER_STALE_MS);
    return this.sql
      .exec<{ session_key: string }>('SELECT session_key FROM writers ORDER BY session_key')
      .toArray()
      .map((r) => r.session_key);
  }

  /** Sessions a move found quiet leave the list (they are listed again when they write). */
  forget(sessionKeys: readonly string[]): void {
    for (const key of sessionKeys) {
      this.sql.exec('DELETE FROM writers WHERE session_key = ?', key);
      this.#known.delete(key);
    }
  }

  /** The move `moveId` is over: the gate opens, and writers are told where the team lives now (null: unchanged). */
  open(moveId: string, shard: string | null, now: number): void {
    this.sql.exec('DELETE FROM write_gate WHERE id = 1 AND move_id = ?', moveId);
    if (shard !== null) {
      this.sql.exec(
        'INSERT INTO placement (id, shard, at) VALUES (1, ?1, ?2) ON CONFLICT(id) DO UPDATE SET shard = ?1, at = ?2',
        shard,
        now,
      );
    }
  }

  state(now: number): { moving: boolean; moveId: string | null; until: number | null } {
    const closed = this.#closed(now);
    return { moving: closed !== null, moveId: closed?.moveId ?? null, until: closed?.until ?? null };
  }
}
