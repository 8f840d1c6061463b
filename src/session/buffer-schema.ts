// The SessionDO buffer's SQLite schema (versioned by src/db/do-schema.ts) and its pending-row mapping.
import type { DoSchemaSteps } from '../db/do-schema';
import type { EventSnapshot, PendingRow } from './types';

/**
 * The buffer's schema, one step per version (src/db/do-schema.ts). Step 1 is the schema from before versioning,
 * written with IF NOT EXISTS so objects created then adopt it; later steps append here.
 */
export const BUFFER_SCHEMA: DoSchemaSteps = [
  `
CREATE TABLE IF NOT EXISTS pending (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('observation','summarize')),
  payload TEXT NOT NULL,
  chars INTEGER NOT NULL,
  occurred_at INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  prompt_number INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  group_key TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  claim_id TEXT
);
CREATE INDEX IF NOT EXISTS idx_pending_claim ON pending (claim_id);
CREATE TABLE IF NOT EXISTS seen (event_id TEXT PRIMARY KEY, prompt_number INTEGER NOT NULL, seen_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_seen_time ON seen (seen_at);
CREATE TABLE IF NOT EXISTS dead_letters (
  event_id TEXT PRIMARY KEY, kind TEXT NOT NULL, tool_name TEXT, payload TEXT NOT NULL, snapshot TEXT NOT NULL,
  occurred_at INTEGER NOT NULL, prompt_number INTEGER NOT NULL, attempts INTEGER NOT NULL, last_error TEXT, failed_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS prompts (prompt_number INTEGER PRIMARY KEY, private INTEGER NOT NULL, text TEXT NOT NULL, occurred_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_pending_time ON pending (occurred_at);
CREATE TABLE IF NOT EXISTS lease (id INTEGER PRIMARY KEY CHECK (id = 1), claim_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
`,
  // 2: prompt ids, client order and turn keys. Objects that predate versioning may have some of these already.
  (sql) => addMissingColumns(sql),
  // 3: the instance of the object that holds the lease. A lease without one was taken before this step, by an
  // instance that is gone by the time any step runs.
  'ALTER TABLE lease ADD COLUMN instance_id TEXT',
  // 4: the work after a stored turn (vectors) that has not finished yet: an instance that dies leaves it here.
  'CREATE TABLE IF NOT EXISTS after_store (id INTEGER PRIMARY KEY AUTOINCREMENT, stored TEXT NOT NULL, created_at INTEGER NOT NULL)',
  // 5: turns an event was in when its object died (counted by the next instance; policy.ts MAX_TURN_DEATHS).
  'ALTER TABLE pending ADD COLUMN deaths INTEGER NOT NULL DEFAULT 0',
];

/** Columns of step 2, each added only where missing (objects written before versioning may have it). */
const ADDED_COLUMNS: [table: string, column: string, decl: string][] = [
  ['pending', 'prompt_id', 'TEXT'],
  ['pending', 'client_seq', 'INTEGER'],
  ['pending', 'turn_key', 'TEXT'],
  ['prompts', 'prompt_id', 'TEXT'],
  ['prompts', 'client_seq', 'INTEGER'],
];

function addMissingColumns(sql: SqlStorage): void {
  for (const [table, column, decl] of ADDED_COLUMNS) {
    const has =
      sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM pragma_table_info(?) WHERE name = ?', table, column).one().n >
      0;
    if (!has) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${decl}`);
  }
}

export interface PendingSql extends Record<string, SqlStorageValue> {
  seq: number;
  event_id: string;
  kind: 'observation' | 'summarize';
  payload: string;
  chars: number;
  occurred_at: number;
  prompt_number: number;
  snapshot: string;
  group_key: string;
  attempts: number;
  deaths: number;
  last_error: string | null;
  claim_id: string | null;
  prompt_id: string | null;
  client_seq: number | null;
  turn_key: string | null;
}

/** A pending row as the buffer hands it out (JSON columns parsed). */
export const toRow = (r: PendingSql): PendingRow => ({
  seq: r.seq,
  eventId: r.event_id,
  kind: r.kind,
  payload: (JSON.parse(r.payload) as PendingRow['payload'] | null) ?? { agentId: null, agentType: null },
  chars: r.chars,
  occurredAt: r.occurred_at,
  promptNumber: r.prompt_number,
  snapshot: JSON.parse(r.snapshot) as EventSnapshot,
  groupKey: r.group_key,
  attempts: r.attempts,
  deaths: r.deaths,
  lastError: r.last_error,
  claimId: r.claim_id,
  promptId: r.prompt_id,
  clientSeq: r.client_seq,
  turnKey: r.turn_key,
});
