// TeamDO: one per team; caps concurrent observer calls across the team's sessions, holds the shared back-off
// and the observer's health (observer-health.ts: ok, backing off, failing with probes), and the sessions'
// backlogs as they last reported them (for health and the notices users see).
import { migrateDoSqlite, type DoSchemaSteps } from '../db/do-schema';
import { countedStub, meterDurableObject } from '../db/meter-bindings';
import { DurableObject } from 'cloudflare:workers';
import { configOf } from '../config';
import type { CairnEnv } from '../env';
import {
  gate,
  HEALTHY,
  memoryNotice,
  onFailure,
  onRecovered,
  stateOf,
  type Backlog,
  type BackoffKind,
  type FailureReport,
  type HealthRecord,
  type ObserverHealth,
  type TeamBacklog,
} from './observer-health';
import { ROW_EPOCH_SCHEMA, WRITE_GATE_SCHEMA, WriteGate, type GateAnswer } from './write-gate';

/** A slot not released within this time is taken back, so a turn that hangs cannot hold it forever. */
export const SLOT_TTL_MS = 10 * 60_000;
/** When the team is full, a refused session asks again after about this long (slots free up at any moment). */
const FULL_RETRY_MS = 1_500;

/**
 * Sessions woken at once when the observer works again (the longest waiting first): each is a subrequest of the
 * invocation that wakes them, so their number must not grow with the team's (src/db/meter.ts). The others try
 * again at their own back-off's end.
 */
export const WAKE_AT_ONCE = 20;

/** A backlog report older than this is dropped (its session was forgotten or emptied without saying so). */
const BACKLOG_STALE_MS = 30 * 60_000;
/** Dead letters alone (nothing pending) stay in view this long after their session last reported. */
const DEAD_LETTERS_STALE_MS = 24 * 60 * 60_000;

export interface SlotGrant {
  granted: boolean;
  /** ms epoch to ask again when refused; null when granted. */
  retryAt: number | null;
  /** Why a slot was refused: the shared back-off or a full team. */
  reason: 'backoff' | 'full' | null;
  /** The team's observer is failing and this turn is the probe: its outcome tells whether it works again. */
  probe?: boolean;
}

export interface TeamBackoff {
  until: number;
  kind: BackoffKind | null;
}

/** The team's observer health and its sessions' backlogs, one step per version (src/db/do-schema.ts). */
export const TEAM_SCHEMA: DoSchemaSteps = [
  `CREATE TABLE IF NOT EXISTS slots (session_key TEXT PRIMARY KEY, acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
   CREATE TABLE IF NOT EXISTS backoff (id INTEGER PRIMARY KEY CHECK (id = 1), until INTEGER NOT NULL, kind TEXT);`,
  // 2: slots live in the instance's memory (see TeamDO); the rows an earlier version wrote go.
  'DROP TABLE IF EXISTS slots',
  // 3: the back-off becomes the observer's health record (observer-health.ts); the old table stays for a rollback.
  `CREATE TABLE observer_health (id INTEGER PRIMARY KEY CHECK (id = 1), record TEXT NOT NULL);
   INSERT INTO observer_health (id, record)
     SELECT 1, json_object('kind', kind, 'code', NULL, 'detail', NULL, 'since', NULL, 'until', until, 'failures', 1, 'lastOkAt', NULL)
       FROM backoff WHERE id = 1;
   CREATE TABLE backlog (session_key TEXT PRIMARY KEY, pending INTEGER NOT NULL, oldest_at INTEGER, dead_letters INTEGER NOT NULL, reported_at INTEGER NOT NULL);`,
  // 4: the write gate a team move closes (write-gate.ts) and the sessions that wrote through it.
  WRITE_GATE_SCHEMA,
  // 5: the row epoch a forget of a session or project moves (write-gate.ts).
  ROW_EPOCH_SCHEMA,
];

interface Slot {
  acquiredAt: number;
  expiresAt: number;
}

export class TeamDO extends DurableObject<CairnEnv> {
  /**
   * Observer slots belong to this instance of the object, so they live in its memory. A restart (every deploy
   * restarts every object) or an eviction gives them all back at once: the turns that held them ran against
   * the instance that is gone, or die with it in a deploy, and a session whose object lives on asks for its
   * slot again at its next turn. Erring that way may let a team run more than its cap for one turn's length;
   * the other way, slots of dead turns held the whole team back for SLOT_TTL_MS.
   */
  readonly #slots = new Map<string, Slot>();
  readonly #gate: WriteGate;

  constructor(ctx: DurableObjectState, env: CairnEnv) {
    super(ctx, env);
    // Synchronous SQL in the constructor runs before any request is delivered.
    migrateDoSqlite(ctx.storage.sql, TEAM_SCHEMA);
    this.#gate = new WriteGate(ctx.storage.sql);
  }

  // --- the write gate (write-gate.ts): every write path asks, a team move closes it ---

  /** A write for these sessions (none: outside any session) may go ahead, or the team is moving. */
  async enterWrite(sessionKeys: string[], now: number = Date.now()): Promise<GateAnswer> {
    return this.#gate.enter(sessionKeys, now);
  }

  /** Sessions or projects of the team were deleted (see ROW_EPOCH_SCHEMA). */
  async rowsDeleted(): Promise<void> {
    this.#gate.rowsDeleted();
  }

  /** Closes (or renews) the gate for a move; answers the sessions to quiesce, or null while another move holds it. */
  async closeWrites(moveId: string, now: number = Date.now()): Promise<string[] | null> {
    return this.#gate.close(moveId, now);
  }

  async forgetWriters(sessionKeys: string[]): Promise<void> {
    this.#gate.forget(sessionKeys);
  }

  async openWrites(moveId: string, shard: string | null, now: number = Date.now()): Promise<void> {
    this.#gate.open(moveId, shard, now);
  }

  async writeGate(now: number = Date.now()): Promise<{ moving: boolean; moveId: string | null; until: number | null }> {
    return this.#gate.state(now);
  }

  async ping(): Promise<string> {
    return 'ok';
  }

  /**
   * Asks for one observer slot. A session that already holds one gets it again (its expiry is renewed). The
   * session's backlog, when given, is recorded (health, notices, whom to wake when the observer recovers).
   */
  async acquire(sessionKey: string, now: number = Date.now(), backlog?: Backlog): Promise<SlotGrant> {
    for (const [key, slot] of this.#slots) if (slot.expiresAt <= now) this.#slots.delete(key);
    if (backlog) this.#noteBacklog(sessionKey, backlog, now);
    const health = gate(this.#health(), now);
    if (health.wait) return { granted: false, retryAt: health.retryAt, reason: 'backoff' };
    const held = this.#slots.get(sessionKey);
    if (!held && this.#slots.size >= configOf(this.env).observer.concurrency) {
      const soonest = Math.min(...[...this.#slots.values()].map((s) => s.expiresAt));
      return { granted: false, retryAt: Math.min(soonest, now + FULL_RETRY_MS), reason: 'full' };
    }
    this.#slots.set(sessionKey, { acquiredAt: held?.acquiredAt ?? now, expiresAt: now + SLOT_TTL_MS });
    if (!health.probe) return { granted: true, retryAt: null, reason: null };
    this.#saveHealth(health.next);
    return { granted: true, retryAt: null, reason: null, probe: true };
  }

  async release(sessionKey: string, backlog?: Backlog, now: number = Date.now()): Promise<void> {
    this.#slots.delete(sessionKey);
    if (backlog) this.#noteBacklog(sessionKey, backlog, now);
  }

  /** Sessions holding a slot right now (status and tests). */
  async activeSlots(now: number = Date.now()): Promise<string[]> {
    return [...this.#slots.entries()]
      .filter(([, s]) => s.expiresAt > now)
      .sort(([, a], [, b]) => a.acquiredAt - b.acquiredAt)
      .map(([key]) => key);
  }

  /**
   * Records a provider refusal seen by one session (observer-health.ts onFailure); every session of the team
   * waits until the answer's `until`: a back-off's end, or the next probe while the observer is failing.
   */
  async reportFailure(report: FailureReport, now: number = Date.now()): Promise<TeamBackoff> {
    const next = onFailure(this.#health(), report, now);
    this.#saveHealth(next);
    return { until: next.until, kind: next.kind };
  }

  /**
   * A probe's call went through: the observer works again. Answers the sessions that wait with work (to be
   * woken by the caller: a TeamDO does not reach into session objects; at most WAKE_AT_ONCE) unless the team was
   * well already.
   */
  async reportRecovered(now: number = Date.now()): Promise<string[]> {
    const h = this.#health();
    if (stateOf(h, now) === 'ok' && h.kind === null) return [];
    this.#saveHealth(onRecovered(now));
    return this.#waiting(now);
  }

  async backoffUntil(): Promise<TeamBackoff> {
    const h = this.#health();
    return { until: h.until, kind: h.kind };
  }

  /**
   * The next try is due now (an admin fixed the key or raised the cap: `cairn admin observer retry`; tests:
   * time has passed). A failing observer stays failing until that try's call goes through. Answers the
   * sessions that wait with work, for the caller to wake (at most WAKE_AT_ONCE).
   */
  async clearBackoff(now: number = Date.now()): Promise<string[]> {
    this.#saveHealth({ ...this.#health(), until: 0 });
    return this.#waiting(now);
  }

  /** The observer's state and the team's backlog (GET /api/admin/health, GET /api/observer/state). */
  async health(now: number = Date.now()): Promise<ObserverHealth> {
    const h = this.#health();
    const state = stateOf(h, now);
    const backlog = this.#backlog(now);
    const view = {
      state,
      kind: state === 'ok' ? null : h.kind,
      code: state === 'ok' ? null : h.code,
      detail: state === 'ok' ? null : h.detail,
      since: state === 'ok' ? null : h.since,
      retry_at: h.until > now ? h.until : null,
      last_ok_at: h.lastOkAt,
      backlog,
    };
    return { ...view, notice: memoryNotice(view, now) };
  }

  #health(): HealthRecord {
    const row = this.ctx.storage.sql
      .exec<{ record: string }>('SELECT record FROM observer_health WHERE id = 1')
      .toArray()[0];
    return row ? { ...HEALTHY, ...(JSON.parse(row.record) as Partial<HealthRecord>) } : HEALTHY;
  }

  #saveHealth(h: HealthRecord): void {
    this.ctx.storage.sql.exec(
      'INSERT INTO observer_health (id, record) VALUES (1, ?1) ON CONFLICT(id) DO UPDATE SET record = ?1',
      JSON.stringify(h),
    );
  }

  #noteBacklog(sessionKey: string, b: Backlog, now: number): void {
    const sql = this.ctx.storage.sql;
    if (b.pending === 0 && b.deadLetters === 0) sql.exec('DELETE FROM backlog WHERE session_key = ?', sessionKey);
    else {
      sql.exec(
        `INSERT INTO backlog (session_key, pending, oldest_at, dead_letters, reported_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(session_key) DO UPDATE SET pending = ?2, oldest_at = ?3, dead_letters = ?4, reported_at = ?5`,
        sessionKey,
        b.pending,
        b.oldestAt,
        b.deadLetters,
        now,
      );
    }
  }

  #prune(now: number): void {
    this.ctx.storage.sql.exec(
      'DELETE FROM backlog WHERE (pending > 0 AND reported_at < ?1) OR reported_at < ?2',
      now - BACKLOG_STALE_MS,
      now - DEAD_LETTERS_STALE_MS,
    );
  }

  #backlog(now: number): TeamBacklog {
    this.#prune(now);
    const r = this.ctx.storage.sql
      .exec<{ sessions: number; pending: number | null; oldest: number | null; dead: number | null }>(
        'SELECT COUNT(*) AS sessions, SUM(pending) AS pending, MIN(CASE WHEN pending > 0 THEN oldest_at END) AS oldest, SUM(dead_letters) AS dead FROM backlog',
      )
      .one();
    return { sessions: r.sessions, pending: r.pending ?? 0, oldestAt: r.oldest, deadLetters: r.dead ?? 0 };
  }

  /** The sessions that wait with work, the longest waiting first, at most WAKE_AT_ONCE. */
  #waiting(now: number): string[] {
    this.#prune(now);
    return this.ctx.storage.sql
      .exec<{ session_key: string }>(
        'SELECT session_key FROM backlog WHERE pending > 0 ORDER BY oldest_at, session_key LIMIT ?',
        WAKE_AT_ONCE,
      )
      .toArray()
      .map((r) => r.session_key);
  }
}

/** One TeamDO per team. */
// Every RPC method is an invocation of its own, counted (src/db/meter.ts).
meterDurableObject(TeamDO, 'team');

export const teamObjectName = (teamId: number) => `team:${teamId}`;

/** The team's Durable Object, typed: the one place the TEAMS binding meets this class. */
export function teamStub(env: Pick<CairnEnv, 'TEAMS'>, teamId: number): DurableObjectStub<TeamDO> {
  return countedStub(env.TEAMS.getByName(teamObjectName(teamId)), 'team');
}
