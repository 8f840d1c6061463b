// SessionDO: one per agent session (`team:session`). A durable buffer of hook events and the alarm-driven
// observer loop: claim → observe → store in D1 → confirm, one turn at a time, never losing an event.
import { configOf } from '../config';
import { DurableObject } from 'cloudflare:workers';
import type { CairnEnv } from '../env';
import type { ConversationState } from '../observer/conversation';
import { loadMode } from '../observer/modes';
import { createHeuristicProvider } from '../observer/providers/heuristic';
import { createProvider } from '../observer/providers/index';
import { runTurn, type TurnOutcome } from '../observer/turn';
import type { ObserverProvider } from '../observer/types';
import { defaultAfterStore, type AfterStore } from '../store/after-store';
import { storeTurn } from '../store/turn-store';
import { teamStub } from '../slots/team-do';
import { indexObservations } from '../vectors/index-observations';
import { addDeadLetters } from '../db/retention';
import { turnStored } from '../db/turns';
import { EventBuffer } from './buffer';
import { IngestGate, type Admission } from './admission';
import { meterCall, teamBudget } from '../observer/spend';
import { fileEvent } from './filing';
import { toSummaryRequest, toToolEvent, turnRecord } from './observe';
import { MAX_ATTEMPTS, planFailure, selectBatch, type FailureKind } from './policy';
import { fileOverdue, refileForPrompt, targetOf, WAIT_FOR_PROMPT_MS } from './refile';
import { retentionMs, retentionStep } from './retention';
import type { EnqueueInput, EnqueueResult, PendingRow, SessionStatus } from './types';
import { teamDb } from '../db/shards';

/** How long one turn may hold the session; a turn that died is taken over after this. */
export const LEASE_MS = 10 * 60_000;

/** Where a test can break a turn on purpose: `throw` fails the step, `crash` abandons the turn mid-way. */
export type FaultPoint = 'before-store' | 'after-store';
export interface SessionSeams {
  fault?: (point: FaultPoint) => 'crash' | void;
  afterStore?: AfterStore;
  provider?: ObserverProvider;
  /** The clock observer budgets and usage days are read with. */
  now?: () => number;
}

class Abandoned extends Error {}

export class SessionDO extends DurableObject<CairnEnv> {
  #buffer: EventBuffer;
  /** Test seams only (not reachable over RPC: instance fields are not methods). */
  testSeams: SessionSeams = {};

  constructor(ctx: DurableObjectState, env: CairnEnv) {
    super(ctx, env);
    this.#buffer = new EventBuffer(ctx.storage.sql);
  }

  async ping(): Promise<string> {
    return 'ok';
  }

  readonly #ingestGate = new IngestGate();

  /**
   * Ingest's one round trip: counts the events against the session's per-minute ingest limit, then enqueues
   * those let in, in order (batch replay sends all of a session's events in one call). Refused events are
   * neither enqueued nor counted.
   */
  async admit(inputs: EnqueueInput[], limit: number): Promise<Admission> {
    const { verdict, granted } = this.#ingestGate.take(Date.now(), limit, inputs.length);
    const results: EnqueueResult[] = [];
    for (const input of inputs.slice(0, granted)) results.push(await this.enqueue(input));
    return { verdict, results };
  }

  /**
   * Accepts one hook event. Synchronous SQL only until the answer is decided, so the dedupe check and the
   * insert are one atomic step even with other calls interleaving. Repeated event ids get the first answer.
   */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    const now = Date.now();
    const b = this.#buffer;
    const seen = b.seenPrompt(input.eventId);
    if (seen !== null) return { accepted: true, duplicate: true, promptNumber: seen };
    if (b.get<unknown>('session', null) === null) b.set('session', { teamId: input.snapshot.teamId, sessionKey: input.snapshot.sessionKey });
    if (b.get<string | null>('mode', null) !== input.modeId) b.set('mode', input.modeId);

    const mark = { promptId: input.promptId ?? null, occurredAt: input.occurredAt, clientSeq: input.clientSeq ?? null };

    if (input.kind === 'init') {
      // The same prompt sent again under another event id (a client retry) is still one prompt.
      const known = mark.promptId !== null ? b.promptById(mark.promptId) : null;
      if (known !== null) {
        b.markSeen(input.eventId, known, now);
        return { accepted: true, duplicate: true, promptNumber: known };
      }
      const n = b.currentPrompt() + 1;
      const prompt = { ...mark, promptNumber: n, private: input.private };
      b.addPrompt(prompt, input.prompt);
      b.markSeen(input.eventId, n, now);
      // Events that happened during this prompt but arrived before it move under it (or go, if it is private).
      if (refileForPrompt(b, prompt) > 0) await this.#ensureAlarm(now);
      return { accepted: true, duplicate: false, promptNumber: n };
    }
    if (input.kind === 'end') {
      const n = b.currentPrompt();
      b.markSeen(input.eventId, n, now);
      b.set('ended_at', input.occurredAt);
      b.set('ended_received_at', now);
      await this.#scheduleNext();
      return { accepted: true, duplicate: false, promptNumber: n };
    }
    const filing = fileEvent(b.promptMarks(), mark);
    const n = targetOf(filing);
    b.markSeen(input.eventId, n, now);
    // The prompt during which it happened is private: nothing its turn did is kept, not even in the buffer.
    if (filing.kind === 'prompt' && filing.prompt?.private) return { accepted: false, duplicate: false, promptNumber: n, skipped: 'private' };
    // A subagent's stop is not the end of the user's request; the main agent's summary covers it.
    if (input.kind === 'summarize' && input.agentId) return { accepted: false, duplicate: false, promptNumber: n, skipped: 'subagent_summary' };
    b.insert(input, n, now);
    await this.#ensureAlarm(now, filing.kind === 'wait');
    return { accepted: true, duplicate: false, promptNumber: n };
  }

  /**
   * Forgets everything this session holds: buffered events (tool input and output), prompt texts, the
   * observer conversation, dead letters, counters. The object starts empty if the session goes on.
   */
  async forgetAll(): Promise<void> {
    await this.#empty();
  }

  /**
   * Deletes all storage. Only the last prompt number stays (no text): a session resumed later goes on
   * numbering its prompts after it instead of colliding with the prompts D1 already has.
   */
  async #empty(): Promise<void> {
    const last = this.#buffer.currentPrompt();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#buffer = new EventBuffer(this.ctx.storage.sql);
    if (last > 0) this.#buffer.set('prompt_base', last);
  }

  /** Retention: true when this alarm was about the ended session's storage (and nothing else is due). */
  async #retire(now: number): Promise<boolean> {
    const b = this.#buffer;
    const step = retentionStep({ endedAt: b.get<number | null>('ended_received_at', null), pending: b.counts(null).pending }, retentionMs(this.env.SESSION_RETENTION_SECONDS), now);
    if (step.kind === 'keep') return false;
    if (step.kind === 'wait') {
      await this.ctx.storage.setAlarm(step.at);
      return true;
    }
    const session = b.get<{ teamId: number; sessionKey: string } | null>('session', null);
    const dead = b.deadLetterCount();
    // Counted into D1 first: if that fails, the alarm throws and is retried with the storage still there.
    if (session) await addDeadLetters(await teamDb(this.env, session.teamId), session.teamId, session.sessionKey, dead);
    await this.#empty();
    return true;
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

  /** Gives dead-lettered events another full set of tries (e.g. once a bad model name is fixed). */
  async retryDeadLetters(): Promise<number> {
    const now = Date.now();
    const n = this.#buffer.requeueDeadLetters(now);
    if (n > 0) await this.#ensureAlarm(now);
    return n;
  }

  /** One observer turn per alarm; the next alarm is set when work remains. */
  async alarm(): Promise<void> {
    const now = Date.now();
    const b = this.#buffer;
    b.pruneSeen(now);
    const live = b.lease(now);
    if (live) {
      await this.ctx.storage.setAlarm(live.expiresAt);
      return;
    }
    if (await this.#retire(now)) return;
    const backoff = b.get<number>('backoff_until', 0);
    if (backoff > now) {
      await this.ctx.storage.setAlarm(backoff);
      return;
    }

    // No live lease: whatever is still claimed belongs to a turn that died. Give it back, then retire
    // events whose retry budget is spent before choosing the next batch.
    b.releaseStaleClaims();
    b.deadLetter(MAX_ATTEMPTS, now);
    fileOverdue(b, now);
    if (b.readyCount() === 0) return this.#scheduleNext();

    const claimId = crypto.randomUUID();
    b.takeLease(claimId, now + LEASE_MS);
    const session = b.get<{ teamId: number; sessionKey: string } | null>('session', null);
    const team = session ? teamStub(this.env, session.teamId) : null;
    let abandoned = false;
    let slot = false;
    let retryAt: number | null = null;
    try {
      if (team && session) {
        const grant = await team.acquire(session.sessionKey);
        if (!grant.granted) {
          retryAt = grant.retryAt ?? Date.now() + 1_000;
          return;
        }
        slot = true;
      }
      // A turn that died after its D1 write is formed again from the same events, under its own key.
      // Otherwise chosen after the await: events that arrived meanwhile join this turn.
      const again = b.unfinishedTurn();
      const chosen = again ? again.seqs : selectBatch(b.candidates()).map((r) => r.seq);
      if (chosen.length === 0) return;
      const turnKey = again?.turnKey ?? claimId;
      b.claim(claimId, chosen, turnKey);
      const batch = b.load(chosen);
      await this.#turn(claimId, turnKey, batch, again !== null);
    } catch (err) {
      if (err instanceof Abandoned) abandoned = true;
      else await this.#fail(claimId, 'store', null, err);
    } finally {
      if (abandoned) {
        // Like a turn that died: claims and lease stay; the next alarm after the lease expires takes over.
        await this.ctx.storage.setAlarm(now + LEASE_MS);
      } else {
        b.dropLease(claimId);
        if (slot && team && session) await team.release(session.sessionKey).catch(() => undefined);
        if (retryAt !== null) await this.ctx.storage.setAlarm(retryAt);
        else await this.#scheduleNext();
      }
    }
  }

  /** One claimed batch: observe it, then store and confirm what came back (or back off). */
  async #turn(claimId: string, turnKey: string, batch: PendingRow[], replay: boolean): Promise<void> {
    const b = this.#buffer;
    const head = batch[0]!;
    const prompt = b.prompt(head.promptNumber);
    if (prompt?.private) return this.#confirm(claimId, null, 0);
    // Stored once with any observer: a replayed turn already in D1 is confirmed, not observed (and reworded) again.
    if (replay && (await turnStored(await teamDb(this.env, head.snapshot.teamId), head.snapshot.teamId, turnKey))) return this.#confirm(claimId, null, 0);

    const outcome = await this.#observe(batch, prompt);
    if (b.lease(Date.now())?.claimId !== claimId) {
      // Release touches only rows still claimed under this id: if another turn took them over, it keeps them.
      console.warn('observer turn outlived its lease; its events will be observed again', { claimId });
      b.release(claimId, false, 'observer turn outlived its lease');
      return;
    }
    if (this.#refiledDuring(claimId, batch)) return;

    switch (outcome.kind) {
      case 'failure':
        return this.#fail(claimId, outcome.failure.kind, outcome.failure.retryAfterMs, outcome.failure);
      case 'empty':
        return this.#confirm(claimId, outcome.state, 0);
      case 'prose':
        console.warn('observer answered in prose; events confirmed without observations', { claimId, preview: outcome.preview });
        b.set('last_error', `prose reply: ${outcome.preview}`.slice(0, 300));
        return this.#confirm(claimId, outcome.state, 0);
      case 'parsed':
        return this.#store(claimId, turnKey, batch, prompt?.promptId ?? null, outcome);
    }
  }

  /** Asks the observer (the heuristic one while the team's budget is spent) and meters the call. */
  async #observe(batch: PendingRow[], prompt: { text: string } | null): Promise<TurnOutcome> {
    const b = this.#buffer;
    const head = batch[0]!;
    const summaryRow = batch.find((r) => r.kind === 'summarize');
    const provider = await this.#budgetedProvider(head.snapshot.teamId);
    const outcome = await runTurn(provider, {
      mode: loadMode(b.get<string | null>('mode', null) ?? configOf(this.env).mode),
      session: { project: head.snapshot.projectKey, sessionKey: head.snapshot.sessionKey, promptNumber: head.promptNumber, userPrompt: prompt?.text ?? '' },
      events: batch.filter((r) => r.kind === 'observation').map(toToolEvent),
      summary: summaryRow ? toSummaryRequest(summaryRow) : null,
      now: Date.now(),
      state: b.get<ConversationState | null>('conversation', null),
    });
    if (provider.name !== 'heuristic' && outcome.kind !== 'failure') {
      await meterCall(this.env, head.snapshot, outcome.model, outcome.usage, this.#now()).catch((err: unknown) =>
        console.warn('observer usage not recorded', { message: String(err) }),
      );
    }
    return outcome;
  }

  /** Writes a parsed turn to D1, confirms its events, and hands new rows to the after-store work (vectors, live). */
  async #store(claimId: string, turnKey: string, batch: PendingRow[], promptId: string | null, outcome: Extract<TurnOutcome, { kind: 'parsed' }>): Promise<void> {
    const u = outcome.usage;
    const record = turnRecord(batch, outcome.observations, outcome.summary, u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens, {
      generationId: outcome.state.generation,
      turnKey,
      promptId,
      storedAt: Date.now(),
    });
    this.#seam('before-store');
    const stored = await storeTurn(await teamDb(this.env, record.context.teamId), record);
    this.#seam('after-store');
    this.#confirm(claimId, outcome.state, stored.observationIds.length);
    if (stored.observationIds.length || stored.summaryId !== null) {
      const after = this.testSeams.afterStore ?? defaultAfterStore(this.env, indexObservations);
      this.ctx.waitUntil(after.run(stored).catch((err: unknown) => console.warn('after-store failed', { message: String(err) })));
    }
  }

  /**
   * A prompt that arrived while the observer worked may have taken some of the turn's events (a late
   * private prompt above all). Then nothing of the turn is stored: the private prompt's events are dropped
   * and the others go back to be observed under their own prompt.
   */
  #refiledDuring(claimId: string, batch: PendingRow[]): boolean {
    const b = this.#buffer;
    const now = b.filedUnder(batch.map((r) => r.seq));
    if (batch.every((r) => now.get(r.seq) === r.promptNumber)) return false;
    for (const r of batch) {
      const n = now.get(r.seq);
      if (n !== undefined && b.prompt(n)?.private) b.drop(r.seq);
    }
    b.release(claimId, false, 'a prompt that arrived during the turn took some of its events');
    return true;
  }

  /** Deletes the claimed events and records the turn; one synchronous (atomic) write. */
  #confirm(claimId: string, state: ConversationState | null, stored: number): void {
    const b = this.#buffer;
    b.confirm(claimId);
    if (state) b.set('conversation', state);
    b.bump('turns');
    if (stored) b.bump('observations_stored', stored);
    b.set('streak', 0);
  }

  async #fail(claimId: string, kind: FailureKind, retryAfterMs: number | null, err: unknown): Promise<void> {
    const b = this.#buffer;
    const streak = b.get<number>('streak', 0);
    const plan = planFailure(kind, retryAfterMs, streak);
    const message = `${kind}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    if (kind === 'store' || kind === 'server' || kind === 'network') console.error('observer turn failed', { claimId, message });
    else console.warn('observer turn backing off', { claimId, message, delayMs: plan.delayMs });
    const until = Date.now() + plan.delayMs;
    b.release(claimId, plan.countsAttempt, message, kind === 'store');
    b.set('streak', streak + 1);
    b.set('backoff_until', until);
    b.set('last_error', message);
    const session = b.get<{ teamId: number } | null>('session', null);
    if (plan.shared && session) {
      // Awaited (it is one small RPC) so that other sessions of the team see it before this turn ends.
      await teamStub(this.env, session.teamId)
        .reportBackoff(plan.shared, until)
        .catch((e: unknown) => console.warn('team back-off report failed', { message: String(e) }));
    }
  }

  #seam(point: FaultPoint): void {
    if (this.testSeams.fault?.(point) === 'crash') throw new Abandoned();
  }

  #now(): number {
    return this.testSeams.now?.() ?? Date.now();
  }

  /**
   * The configured provider, or the heuristic one while the team's observer budget for the day or month is
   * spent. The state is kept (`budget`) so status and the context index can say so.
   */
  async #budgetedProvider(teamId: number): Promise<ObserverProvider> {
    const configured = this.#provider();
    if (configured.name === 'heuristic') return configured;
    const budget = await teamBudget(await teamDb(this.env, teamId), teamId, this.#now()).catch((err: unknown) => {
      console.warn('observer budget unknown; observing as configured', { message: String(err) });
      return null;
    });
    this.#buffer.set('budget', budget?.exhausted ? { exhausted: budget.exhausted, until: budget.until } : null);
    return budget?.exhausted ? (this.#heuristic ??= createHeuristicProvider()) : configured;
  }

  #heuristic: ObserverProvider | null = null;
  #providerCache: ObserverProvider | null = null;
  #provider(): ObserverProvider {
    return this.testSeams.provider ?? (this.#providerCache ??= createProvider(this.env));
  }

  /**
   * Makes sure an alarm comes by the time work is due: an earlier alarm is kept, a later one brought forward
   * (one set during a turn points at that turn's lease expiry, minutes away). The alarm is read before the
   * lease: a turn that ends while we wait must not leave us aiming at its expired lease.
   */
  async #ensureAlarm(now: number, waiting = false): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    const lease = this.#buffer.lease(now);
    const due = lease ? lease.expiresAt : waiting ? now + WAIT_FOR_PROMPT_MS : Math.max(now, this.#buffer.get<number>('backoff_until', 0));
    if (current === null || current > due) await this.ctx.storage.setAlarm(due);
  }

  async #scheduleNext(): Promise<void> {
    const b = this.#buffer;
    if (b.readyCount() > 0) return this.ctx.storage.setAlarm(Math.max(Date.now(), b.get<number>('backoff_until', 0)));
    // Only waiting events: wake when the oldest has waited long enough to be filed by its time.
    const waiting = b.oldestWaiting();
    if (waiting !== null) return this.ctx.storage.setAlarm(waiting + WAIT_FOR_PROMPT_MS);
    // Nothing left to observe: an ended session's storage goes once its retention time has passed.
    const step = retentionStep({ endedAt: b.get<number | null>('ended_received_at', null), pending: b.counts(null).pending }, retentionMs(this.env.SESSION_RETENTION_SECONDS), Date.now());
    if (step.kind !== 'keep') await this.ctx.storage.setAlarm(step.kind === 'wait' ? step.at : Date.now());
  }
}

/** One SessionDO per (team, agent session). */
export const sessionObjectName = (teamId: number, sessionKey: string) => `${teamId}:${sessionKey}`;

/** The session's Durable Object, typed: the one place the SESSIONS binding meets this class. */
export function sessionStub(env: Pick<CairnEnv, 'SESSIONS'>, teamId: number, sessionKey: string): DurableObjectStub<SessionDO> {
  return env.SESSIONS.getByName(sessionObjectName(teamId, sessionKey));
}
