// SessionDO: one per agent session (`team:session`). A durable buffer of hook events and the alarm-driven
// observer loop: claim → observe → store in D1 → confirm, one turn at a time, never losing an event.
// This file is the RPC surface and the storage's life; the parts live beside it: intake.ts (taking an event
// in), turn.ts (one observer turn), alarms.ts (when the next alarm comes), buffer.ts (the storage itself).
import { DurableObject } from 'cloudflare:workers';
import { countedStub, meterDurableObject } from '../db/meter-bindings';
import { addDeadLetters, sessionRetired } from '../db/retention';
import { forgetShard, shardDb, teamDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { IngestGate, type Admission } from './admission';
import { AfterStoreRunner } from './after-store-work';
import { RESUME_MS, retentionOf, SessionAlarms } from './alarms';
import { EventBuffer } from './buffer';
import { intake, sessionOf } from './intake';
import { MAX_ATTEMPTS } from './policy';
import { fileOverdue } from './refile';
import { retentionMs } from './retention';
import type { SessionSeams } from './seams';
import { ObserverTurns } from './turn';
import type { EnqueueInput, EnqueueResult, SessionStatus } from './types';
import { rebaseSnapshots, type MoveQuiet } from './move-hold';
import { errorText, log } from '../lib/log';

export class SessionDO extends DurableObject<CairnEnv> {
  #buffer: EventBuffer;
  readonly #ingestGate = new IngestGate();
  readonly #keepMs: number;
  readonly #alarms: SessionAlarms;
  readonly #turns: ObserverTurns;
  readonly #afterStore: AfterStoreRunner;
  /** Test seams only (not reachable over RPC: instance fields are not methods). */
  testSeams: SessionSeams = {};
  /** This instance of the object: a turn's lease belongs to the instance that took it (buffer.ts). */
  readonly instanceId = crypto.randomUUID();

  constructor(ctx: DurableObjectState, env: CairnEnv) {
    super(ctx, env);
    this.#buffer = new EventBuffer(ctx.storage.sql, this.instanceId);
    this.#keepMs = retentionMs(env.SESSION_RETENTION_SECONDS);
    this.#alarms = new SessionAlarms(ctx.storage, () => this.#buffer, this.#keepMs);
    this.#afterStore = new AfterStoreRunner({
      env,
      buffer: () => this.#buffer,
      seams: () => this.testSeams,
      waitUntil: (work) => ctx.waitUntil(work),
    });
    this.#turns = new ObserverTurns({
      env,
      buffer: () => this.#buffer,
      alarms: this.#alarms,
      seams: () => this.testSeams,
      wake: (teamId, keys) => ctx.waitUntil(wakeSessions(env, teamId, keys)),
      afterStore: this.#afterStore,
    });
    // Before any call is delivered: what the instance before this one left behind is taken over now.
    void ctx.blockConcurrencyWhile(() => this.#takeOver());
  }

  /**
   * A new instance starts (first use, a restart, a deploy, an eviction): a turn the old instance ran died with
   * it, so its lease and claims are given back at once and its events observed again (a turn it had stored is
   * recognised by its turn key, turn.ts). The alarm is brought to when the work is due: one the old instance
   * set may be far ahead, or lost.
   */
  async #takeOver(): Promise<void> {
    const given = this.#buffer.releaseDeadTurn();
    if (given > 0)
      log(
        'warn',
        'an observer turn died with the previous instance of its session object; its events are observed again',
        { events: given },
      );
    // After-store work left behind runs in the first alarm (an alarm keeps the object alive while it runs).
    await this.#alarms.resume(Date.now(), this.#buffer.afterStoreLeft(1).length > 0);
  }

  async ping(): Promise<string> {
    return 'ok';
  }

  /**
   * Ingest's one round trip: counts the events against the session's per-minute ingest limit, then enqueues
   * those let in, in order (batch replay sends all of a session's events in one call). Refused events are
   * neither enqueued nor counted.
   */
  async admit(inputs: EnqueueInput[], limit: number): Promise<Admission> {
    const held = this.#moveHold(Date.now());
    if (held)
      return {
        verdict: { allowed: false, limit, remaining: 0, retryAfterMs: held.until - Date.now() },
        results: [],
        movingUntil: held.until,
      };
    const { verdict, granted } = this.#ingestGate.take(Date.now(), limit, inputs.length);
    const results: EnqueueResult[] = [];
    for (const input of inputs.slice(0, granted)) results.push(await this.enqueue(input));
    return { verdict, results };
  }

  /** Accepts one hook event (intake.ts), then makes sure an alarm comes when its work is due. */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    const now = Date.now();
    const { result, wake } = intake(this.#buffer, input, now);
    if (wake === 'next') await this.#alarms.next();
    else if (wake !== 'none') await this.#alarms.ensure(now, wake === 'wait');
    return result;
  }

  async status(): Promise<SessionStatus> {
    const now = Date.now();
    const b = this.#buffer;
    const counts = b.counts(b.lease(now)?.claimId ?? null);
    const backoff = b.get<number>('backoff_until', 0);
    return {
      pending: counts.pending,
      in_flight: counts.inFlight,
      turns: b.get<number>('turns', 0),
      observations_stored: b.get<number>('observations_stored', 0),
      dead_letters: b.deadLetters(),
      backoff_until: backoff > now ? backoff : null,
      last_error: b.get<string | null>('last_error', null),
    };
  }

  /**
   * The team's observer works again (a probe went through, or an admin asked to retry): events held back by
   * the team's back-off are observed now rather than at this session's next try.
   */
  async wake(): Promise<void> {
    const now = Date.now();
    if (this.#buffer.readyCount() === 0) return;
    this.#buffer.set('backoff_until', 0);
    await this.#alarms.ensure(now);
  }

  // --- team moves (src/transfer/move-job.ts) ---

  /**
   * The team is moving: this object takes no event until `until` (renewed by each step of the move) or until
   * `releaseAfterMove`, and answers whether it still holds work that names the old database's rows: events
   * buffered (waiting for their prompt too), a turn open, work after a stored turn. Its turns go on meanwhile,
   * storing on the old database before it is copied.
   */
  async holdForMove(moveId: string, until: number): Promise<MoveQuiet> {
    this.#buffer.set('move_hold', { moveId, until });
    const now = Date.now();
    const counts = this.#buffer.counts(this.#buffer.lease(now)?.claimId ?? null);
    const quiet = {
      pending: counts.pending,
      inFlight: counts.inFlight,
      turnOpen: this.#buffer.lease(now) !== null,
      afterStore: this.#buffer.afterStoreLeft(1).length,
    };
    // Events waiting for their prompt are filed by their arrival time, not the client's clock: make sure an
    // alarm comes to do it while the move waits.
    if (counts.pending > 0) await this.#alarms.ensure(now);
    return {
      ...quiet,
      quiet: quiet.pending === 0 && quiet.inFlight === 0 && !quiet.turnOpen && quiet.afterStore === 0,
    };
  }

  /**
   * The move is over (or given up): events are taken again, and what the buffer still holds (dead letters,
   * events of a forced move) is re-pointed at the session's and projects' rows on the database the team is
   * on now, found by their keys, so nothing is stored under ids of another database.
   */
  async releaseAfterMove(moveId: string, shard: string | null): Promise<number> {
    const hold = this.#buffer.get<{ moveId: string; until: number } | null>('move_hold', null);
    if (hold && hold.moveId !== moveId) return 0;
    const session = sessionOf(this.#buffer);
    let rebased = 0;
    if (session && shard !== null) {
      // This isolate's memo of the team's database may still name the old one: its turns must not use it.
      forgetShard(session.teamId);
      if (this.#buffer.snapshotCount() > 0)
        rebased = await rebaseSnapshots(this.#buffer, shardDb(this.env, shard), session.teamId);
    }
    this.#buffer.set('move_hold', null);
    return rebased;
  }

  #moveHold(now: number): { moveId: string; until: number } | null {
    const hold = this.#buffer.get<{ moveId: string; until: number } | null>('move_hold', null);
    return hold && hold.until > now ? hold : null;
  }

  /** Gives dead-lettered events another full set of tries (e.g. once a bad model name is fixed). */
  async retryDeadLetters(): Promise<number> {
    const now = Date.now();
    if (this.#moveHold(now)) return 0;
    const n = this.#buffer.requeueDeadLetters(now);
    if (n > 0) await this.#alarms.ensure(now);
    return n;
  }

  /**
   * Forgets everything this session holds: buffered events (tool input and output), prompt texts, the
   * observer conversation, dead letters, counters. The object starts empty if the session goes on.
   */
  async forgetAll(): Promise<void> {
    await this.#empty();
  }

  /**
   * A record this session stored was forgotten (by id, or as the merged source of a forgotten one): the observer
   * conversation holds its text (the reply that wrote it, the calls it came from), so it goes, and the next turn
   * starts a new one. A turn in flight does not write its state back (turn.ts compares `conversation_forgotten`).
   * An object holding no conversation is left untouched (no storage is made for a retired session).
   */
  async forgetConversation(): Promise<void> {
    const b = this.#buffer;
    if (b.get<unknown>('conversation', null) === null) return;
    b.set('conversation', null);
    b.set('prior_shown', null);
    b.bump('conversation_forgotten');
  }

  /** One observer turn per alarm; the next alarm is set when work remains. */
  async alarm(): Promise<void> {
    const now = Date.now();
    this.#buffer.pruneSeen(now);
    const resumed = this.#afterStore.resume();
    if (resumed > 0) log('warn', 'after-store work an earlier instance left unfinished runs again', { turns: resumed });
    if (await this.#notNow(now)) return;
    this.#tidy(now);
    if (this.#buffer.readyCount() === 0) return this.#alarms.next();
    await this.#turns.run(now);
  }

  /** True when this alarm observes nothing: a live turn holds the lease, the storage retires, or the session backs off. */
  async #notNow(now: number): Promise<boolean> {
    const live = this.#buffer.lease(now);
    if (live) {
      // This instance's turn still runs: keep an alarm near in case the instance dies before the turn ends.
      await this.#alarms.at(Math.min(live.expiresAt, now + RESUME_MS));
      return true;
    }
    if (await this.#retire(now)) return true;
    const backoff = this.#buffer.get<number>('backoff_until', 0);
    if (backoff > now) {
      await this.#alarms.at(backoff);
      return true;
    }
    return false;
  }

  /**
   * No live lease: whatever is still claimed belongs to a turn of this instance that outlived its lease (one
   * of an earlier instance was given back when this one started). Give it back, retire events whose
   * retry budget is spent, and file by their time the events that waited too long for their prompt.
   */
  #tidy(now: number): void {
    const b = this.#buffer;
    b.releaseStaleClaims();
    b.deadLetter(MAX_ATTEMPTS, now);
    fileOverdue(b, now);
  }

  /** Retention: true when this alarm was about the ended session's storage (and nothing else is due). */
  async #retire(now: number): Promise<boolean> {
    const b = this.#buffer;
    const step = retentionOf(b, this.#keepMs, now);
    if (step.kind === 'keep') return false;
    if (step.kind === 'wait') {
      await this.#alarms.at(step.at);
      return true;
    }
    const session = sessionOf(b);
    const dead = b.deadLetterCount();
    // Counted into D1 first: if that fails, the alarm throws and is retried with the storage still there. (An alarm
    // retried until Cloudflare gives up leaves the storage here: the daily sweep finds it, retention/session-retire.ts.)
    const d = session ? await teamDb(this.env, session.teamId) : null;
    if (session && d) await addDeadLetters(d, session.teamId, session.sessionKey, dead);
    await this.#empty();
    // Only now is the sweep's mark taken off; if this write is lost, the sweep asks an empty object once more.
    if (session && d)
      await sessionRetired(d, session.teamId, session.sessionKey).catch((err: unknown) =>
        log('warn', 'session retirement not recorded in D1', { message: errorText(err) }),
      );
    return true;
  }

  /**
   * The daily sweep asks (retention/session-retire.ts): an ended session whose alarm gave up (Cloudflare retries a
   * failing alarm a few times, then drops it) would keep its prompts and events here for good. Empties the storage
   * when its retention time has passed, else makes sure an alarm comes when it is due. Answers whether the object
   * still holds the session's text and, when it does, when it will be due (null: not while work is left, or while
   * the session has not ended by this object's own account).
   */
  async sweepRetention(): Promise<{ holds: boolean; dueAt: number | null }> {
    const now = Date.now();
    const b = this.#buffer;
    const step = retentionOf(b, this.#keepMs, now);
    if (step.kind === 'empty' && !this.#moveHold(now)) {
      await this.#retire(now);
      return { holds: false, dueAt: null };
    }
    if (step.kind === 'wait') {
      await this.#alarms.resume(now);
      return { holds: true, dueAt: step.at };
    }
    if (b.holdsNothing()) return { holds: false, dueAt: null };
    await this.#alarms.resume(now);
    return { holds: true, dueAt: null };
  }

  /**
   * Deletes all storage. Only the last prompt number stays (no text): a session resumed later goes on
   * numbering its prompts after it instead of colliding with the prompts D1 already has.
   */
  async #empty(): Promise<void> {
    const last = this.#buffer.currentPrompt();
    const hold = this.#buffer.get<unknown>('move_hold', null);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#buffer = new EventBuffer(this.ctx.storage.sql, this.instanceId);
    if (last > 0) this.#buffer.set('prompt_base', last);
    // A move in progress keeps holding the object: emptied or not, it takes no event until the move ends.
    if (hold !== null) this.#buffer.set('move_hold', hold);
  }
}

// Every RPC method and the alarm is an invocation of its own, counted (src/db/meter.ts).
meterDurableObject(SessionDO, 'session');

/** One SessionDO per (team, agent session). */
export const sessionObjectName = (teamId: number, sessionKey: string) => `${teamId}:${sessionKey}`;

/** The session's Durable Object, typed: the one place the SESSIONS binding meets this class. */
export function sessionStub(
  env: Pick<CairnEnv, 'SESSIONS'>,
  teamId: number,
  sessionKey: string,
): DurableObjectStub<SessionDO> {
  return countedStub(env.SESSIONS.getByName(sessionObjectName(teamId, sessionKey)), 'session');
}

/** Wakes the named sessions of a team (SessionDO.wake); a session that cannot be reached tries again at its own time. */
export async function wakeSessions(
  env: Pick<CairnEnv, 'SESSIONS'>,
  teamId: number,
  sessionKeys: string[],
): Promise<void> {
  await Promise.allSettled(sessionKeys.map((k) => sessionStub(env, teamId, k).wake()));
}
