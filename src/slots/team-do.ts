// TeamDO: one per team; caps concurrent observer calls across the team's sessions and holds the shared back-off.
import { migrateDoSqlite, type DoSchemaSteps } from '../db/do-schema';
import { DurableObject } from 'cloudflare:workers';
import { configOf } from '../config';
import type { CairnEnv } from '../env';

/** A slot not released within this time is taken back, so a turn that hangs cannot hold it forever. */
export const SLOT_TTL_MS = 10 * 60_000;
/** When the team is full, a refused session asks again after about this long (slots free up at any moment). */
const FULL_RETRY_MS = 1_500;

export type BackoffKind = 'rate_limit' | 'overloaded' | 'spend_cap' | 'auth' | 'config';

export interface SlotGrant {
  granted: boolean;
  /** ms epoch to ask again when refused; null when granted. */
  retryAt: number | null;
  /** Why a slot was refused: the shared back-off or a full team. */
  reason: 'backoff' | 'full' | null;
}

export interface TeamBackoff {
  until: number;
  kind: BackoffKind | null;
}

/** The team's provider backoff, one step per version (src/db/do-schema.ts). */
export const TEAM_SCHEMA: DoSchemaSteps = [
  `CREATE TABLE IF NOT EXISTS slots (session_key TEXT PRIMARY KEY, acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
   CREATE TABLE IF NOT EXISTS backoff (id INTEGER PRIMARY KEY CHECK (id = 1), until INTEGER NOT NULL, kind TEXT);`,
  // 2: slots live in the instance's memory (see TeamDO); the rows an earlier version wrote go.
  'DROP TABLE IF EXISTS slots',
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

  constructor(ctx: DurableObjectState, env: CairnEnv) {
    super(ctx, env);
    // Synchronous SQL in the constructor runs before any request is delivered.
    migrateDoSqlite(ctx.storage.sql, TEAM_SCHEMA);
  }

  async ping(): Promise<string> {
    return 'ok';
  }

  /** Asks for one observer slot. A session that already holds one gets it again (its expiry is renewed). */
  async acquire(sessionKey: string, now: number = Date.now()): Promise<SlotGrant> {
    for (const [key, slot] of this.#slots) if (slot.expiresAt <= now) this.#slots.delete(key);
    const backoff = this.#backoff();
    if (backoff.until > now) return { granted: false, retryAt: backoff.until, reason: 'backoff' };
    const held = this.#slots.get(sessionKey);
    if (!held && this.#slots.size >= configOf(this.env).observer.concurrency) {
      const soonest = Math.min(...[...this.#slots.values()].map((s) => s.expiresAt));
      return { granted: false, retryAt: Math.min(soonest, now + FULL_RETRY_MS), reason: 'full' };
    }
    this.#slots.set(sessionKey, { acquiredAt: held?.acquiredAt ?? now, expiresAt: now + SLOT_TTL_MS });
    return { granted: true, retryAt: null, reason: null };
  }

  async release(sessionKey: string): Promise<void> {
    this.#slots.delete(sessionKey);
  }

  /** Sessions holding a slot right now (status and tests). */
  async activeSlots(now: number = Date.now()): Promise<string[]> {
    return [...this.#slots.entries()]
      .filter(([, s]) => s.expiresAt > now)
      .sort(([, a], [, b]) => a.acquiredAt - b.acquiredAt)
      .map(([key]) => key);
  }

  /**
   * Records a provider back-off seen by one session; every session of the team waits until then.
   * Only ever extends: a shorter report never cuts a longer back-off (e.g. a spend cap) short.
   */
  async reportBackoff(kind: BackoffKind, untilMs: number): Promise<TeamBackoff> {
    const current = this.#backoff();
    if (untilMs > current.until) {
      this.ctx.storage.sql.exec(
        'INSERT INTO backoff (id, until, kind) VALUES (1, ?1, ?2) ON CONFLICT(id) DO UPDATE SET until = ?1, kind = ?2',
        untilMs,
        kind,
      );
      return { until: untilMs, kind };
    }
    return current;
  }

  async backoffUntil(): Promise<TeamBackoff> {
    return this.#backoff();
  }

  /** Lifts the shared back-off early (an operator fixed the key, or the cap was raised). */
  async clearBackoff(): Promise<void> {
    this.ctx.storage.sql.exec('DELETE FROM backoff');
  }

  #backoff(): TeamBackoff {
    const row = this.ctx.storage.sql.exec<{ until: number; kind: BackoffKind | null }>('SELECT until, kind FROM backoff WHERE id = 1').toArray()[0];
    return row ? { until: row.until, kind: row.kind } : { until: 0, kind: null };
  }
}

/** One TeamDO per team. */
export const teamObjectName = (teamId: number) => `team:${teamId}`;

/** The team's Durable Object, typed: the one place the TEAMS binding meets this class. */
export function teamStub(env: Pick<CairnEnv, 'TEAMS'>, teamId: number): DurableObjectStub<TeamDO> {
  return env.TEAMS.getByName(teamObjectName(teamId));
}
