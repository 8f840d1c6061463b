// One observer turn of a SessionDO, run from its alarm: take the lease and a team observer slot, claim a
// batch, observe it, then store and confirm what came back (or back off), and plan the next alarm.
import { configOf } from '../config';
import { teamDb } from '../db/shards';
import { storedTurnRows } from './queries';
import type { CairnEnv } from '../env';
import type { ConversationState } from '../observer/conversation';
import { loadMode } from '../observer/modes';
import { createHeuristicProvider } from '../observer/providers/heuristic';
import { createProvider } from '../observer/providers/index';
import { meterCall, teamBudget } from '../observer/spend';
import { observerCorrections } from '../observer/corrections-port';
import { priorBlock, priorQuery, renderPrior } from '../observer/prior';
import { runTurn, type TurnOutcome } from '../observer/turn';
import { ObserverFailure, type ObserverProvider, type ToolEvent } from '../observer/types';
import { teamStub } from '../slots/team-do';
import { storeTurn, type TurnContext } from '../store/turn-store';
import { personalPlace } from '../store/personal';
import type { AfterStoreRunner } from './after-store-work';
import { RESUME_MS, type SessionAlarms } from './alarms';
import type { EventBuffer } from './buffer';
import { sessionOf } from './intake';
import { toSummaryRequest, toToolEvent, turnRecord } from './observe';
import { MAX_TURN_DEATHS, planFailure, selectBatch, type FailureKind } from './policy';
import { Abandoned, type FaultPoint, type SessionSeams } from './seams';
import type { PendingRow } from './types';
import { errorText, log } from '../lib/log';

/**
 * How long one turn may hold the session within its instance: a turn that hangs (an observer call that never
 * answers) is taken over after this. A turn whose instance died is taken over when the next instance starts.
 */
export const LEASE_MS = 10 * 60_000;
/** Ids of prior records a conversation remembers having shown (the newest). */
const PRIOR_SHOWN_KEPT = 100;

export interface TurnDeps {
  env: CairnEnv;
  /** Read on each use: the DO opens a new buffer when it empties its storage. */
  buffer: () => EventBuffer;
  alarms: SessionAlarms;
  seams: () => SessionSeams;
  /** Wakes other sessions of the team (they waited for the observer to recover); never throws. */
  wake: (teamId: number, sessionKeys: string[]) => void;
  /** Vectors and live notices of stored turns, written down before they run (after-store-work.ts). */
  afterStore: AfterStoreRunner;
}

export class ObserverTurns {
  #heuristic: ObserverProvider | null = null;
  #providerCache: ObserverProvider | null = null;
  /** This turn is the team's probe of a failing observer (slots/observer-health.ts). */
  #probe = false;
  /** This turn's batch was sent to the configured provider (not the heuristic fallback). */
  #askedProvider = false;
  /** Prior records this conversation was shown, this turn's included: only those may be corrected (prior.ts). */
  #shown: number[] = [];
  /** `conversation_forgotten` when this turn read the conversation: a forget since then keeps its state unwritten. */
  #forgotten = 0;

  constructor(private readonly deps: TurnDeps) {}

  /** Runs one turn under a new lease and the team's observer slot, then lets go of both and sets the next alarm. */
  async run(now: number): Promise<void> {
    const b = this.deps.buffer();
    const claimId = crypto.randomUUID();
    b.takeLease(claimId, now + LEASE_MS);
    // Should this instance die during the turn, this alarm wakes the next one soon (alarms.ts).
    await this.deps.alarms.at(now + RESUME_MS);
    const session = sessionOf(b);
    const team = session ? teamStub(this.deps.env, session.teamId) : null;
    let abandoned = false;
    let slot = false;
    let retryAt: number | null = null;
    this.#probe = false;
    this.#askedProvider = false;
    try {
      if (team && session) {
        // The backlog rides along: the team's health and its users' notices are made from these reports.
        const grant = await team.acquire(session.sessionKey, Date.now(), b.backlog());
        if (!grant.granted) {
          retryAt = grant.retryAt ?? Date.now() + 1_000;
          return;
        }
        slot = true;
        this.#probe = grant.probe === true;
      }
      await this.#claimAndTurn(claimId);
    } catch (err) {
      if (err instanceof Abandoned) abandoned = true;
      else await this.#fail(claimId, 'store', null, err);
    } finally {
      if (abandoned) {
        // Like a turn that died: claims and lease stay (a new instance, or the lease's end, takes over).
        await this.deps.alarms.at(Date.now() + RESUME_MS);
      } else {
        // The lease goes last: until the next alarm is planned the turn is not over, and an alarm or a reader
        // arriving meanwhile must see it as running (not as idle with no alarm set).
        try {
          if (slot && team && session)
            await team.release(session.sessionKey, this.deps.buffer().backlog()).catch(() => undefined);
          if (retryAt !== null) await this.deps.alarms.at(retryAt);
          else await this.deps.alarms.next();
        } finally {
          b.dropLease(claimId);
        }
      }
    }
  }

  /**
   * A turn that died after its D1 write is formed again from the same events, under its own key. Otherwise
   * the batch is chosen now, after the slot's await: events that arrived meanwhile join this turn.
   */
  async #claimAndTurn(claimId: string): Promise<void> {
    const b = this.deps.buffer();
    const again = b.unfinishedTurn();
    const chosen = again ? again.seqs : selectBatch(b.candidates()).map((r) => r.seq);
    if (chosen.length === 0) return;
    const turnKey = again?.turnKey ?? claimId;
    b.claim(claimId, chosen, turnKey);
    await this.#turn(claimId, turnKey, b.load(chosen), again !== null);
  }

  /** One claimed batch: observe it, then store and confirm what came back (or back off). */
  async #turn(claimId: string, turnKey: string, batch: PendingRow[], replay: boolean): Promise<void> {
    const b = this.deps.buffer();
    const head = batch[0]!;
    const prompt = b.prompt(head.promptNumber);
    if (prompt?.private) return this.#confirm(claimId, null, 0);
    // Stored once with any observer: a replayed turn already in D1 is confirmed, not observed (and reworded) again.
    // Its after-store work may have died with the turn: it is started again on the rows found.
    const already = replay
      ? await storedTurnRows(await teamDb(this.deps.env, head.snapshot.teamId), head.snapshot.teamId, turnKey)
      : null;
    if (already) {
      this.#confirm(claimId, null, 0);
      const prompt = { sessionId: head.snapshot.sessionDbId, promptNumber: head.promptNumber };
      return this.deps.afterStore.start({
        teamId: head.snapshot.teamId,
        ...already,
        duplicates: 0,
        prompt,
        notices: [],
      });
    }

    // A turn that killed its object (every instance that told it died) is not told again: its events go to the
    // dead letters, where an admin can retry them (POST /api/admin/observer/retry) once the cause is known.
    const deaths = Math.max(...batch.map((r) => r.deaths));
    if (deaths >= MAX_TURN_DEATHS) return this.#buried(claimId, deaths);

    const outcome = await this.#observe(batch, prompt);
    if (outcome.kind !== 'failure') await this.#recovered(head.snapshot.teamId);
    if (b.lease(Date.now())?.claimId !== claimId) {
      // Release touches only rows still claimed under this id: if another turn took them over, it keeps them.
      log('warn', 'observer turn outlived its lease; its events will be observed again', { claim_id: claimId });
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
        log('warn', 'observer answered in prose; events confirmed without observations', { claim_id: claimId });
        b.set('last_error', `prose reply: ${outcome.preview}`.slice(0, 300));
        return this.#confirm(claimId, outcome.state, 0);
      case 'parsed':
        return this.#store(claimId, turnKey, batch, prompt?.promptId ?? null, outcome);
    }
  }

  /** Asks the observer (the heuristic one while the team's budget is spent) and meters the call. */
  async #observe(batch: PendingRow[], prompt: { text: string } | null): Promise<TurnOutcome> {
    const b = this.deps.buffer();
    const head = batch[0]!;
    const summaryRow = batch.find((r) => r.kind === 'summarize');
    const provider = await this.#budgetedProvider(head.snapshot.teamId);
    this.#askedProvider = provider.name !== 'heuristic';
    const events = batch.filter((r) => r.kind === 'observation').map(toToolEvent);
    const state = b.get<ConversationState | null>('conversation', null);
    this.#forgotten = b.get<number>('conversation_forgotten', 0);
    const before = b.get<{ generation: string; ids: number[] } | null>('prior_shown', null);
    this.#shown = before && state && before.generation === state.generation ? [...before.ids] : [];
    const prior =
      provider.name !== 'heuristic' && events.length ? await this.#prior(head, events, prompt?.text ?? '') : '';
    const outcome = await runTurn(provider, {
      mode: loadMode(b.get<string | null>('mode', null) ?? configOf(this.deps.env).mode),
      session: {
        project: head.snapshot.projectKey,
        sessionKey: head.snapshot.sessionKey,
        promptNumber: head.promptNumber,
        userPrompt: prompt?.text ?? '',
      },
      events,
      summary: summaryRow ? toSummaryRequest(summaryRow) : null,
      now: Date.now(),
      state,
      contextTokens: configOf(this.deps.env).observer.contextTokens,
      prior,
    });
    if (outcome.kind !== 'failure')
      b.set('prior_shown', { generation: outcome.state.generation, ids: this.#shown.slice(-PRIOR_SHOWN_KEPT) });
    if (provider.name !== 'heuristic' && outcome.kind !== 'failure') {
      await meterCall(this.deps.env, head.snapshot, outcome.model, outcome.usage, this.#now()).catch((err: unknown) =>
        log('warn', 'observer usage not recorded', { message: errorText(err) }),
      );
    }
    return outcome;
  }

  /** Writes a parsed turn to D1, confirms its events, and hands new rows to the after-store work (vectors, live). */
  async #store(
    claimId: string,
    turnKey: string,
    batch: PendingRow[],
    promptId: string | null,
    outcome: Extract<TurnOutcome, { kind: 'parsed' }>,
  ): Promise<void> {
    const u = outcome.usage;
    const record = turnRecord(
      batch,
      outcome.observations,
      outcome.summary,
      u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens,
      {
        generationId: outcome.state.generation,
        turnKey,
        promptId,
        storedAt: Date.now(),
      },
    );
    const shard = await teamDb(this.deps.env, record.context.teamId);
    // What the developer said about themselves goes to their personal memory (made on first use), never the project.
    if (outcome.personal?.length) {
      const c = record.context;
      const author = { teamId: c.teamId, userId: c.authorUserId, deviceId: c.deviceId };
      record.personal = { indices: outcome.personal, place: await personalPlace(shard, author, record.storedAt) };
    }
    this.#seam('before-store');
    const stored = await storeTurn(shard, record);
    this.#seam('after-store');
    this.#confirm(claimId, outcome.state, stored.observationIds.length);
    this.deps.afterStore.start(stored);
    await this.#corrections(record.context, outcome, stored.observationIdsByIndex ?? []);
  }

  /**
   * The prior records shown beside this batch (prior.ts), as a block for the prompt. Records this conversation
   * was already shown are not repeated; a failed look-up shows nothing (the turn goes on without them).
   */
  async #prior(head: PendingRow, events: ToolEvent[], userPrompt: string): Promise<string> {
    const port = observerCorrections();
    if (!port) return '';
    const s = head.snapshot;
    try {
      const records = await port.related(
        this.deps.env,
        { teamId: s.teamId, userId: s.userId, projectId: s.projectId },
        priorQuery(events, userPrompt),
        this.#shown,
        s.sessionDbId,
      );
      const { text, shown } = renderPrior(records);
      this.#shown.push(...shown);
      return priorBlock(text);
    } catch (err) {
      log('warn', 'prior records not shown to the observer', { message: errorText(err) });
      return '';
    }
  }

  /**
   * Stores what the reply said about records it was shown (corrections.ts in src/corrections/). The turn is
   * already stored and confirmed: a failure here loses a proposal, never an observation.
   */
  async #corrections(
    c: TurnContext,
    outcome: Extract<TurnOutcome, { kind: 'parsed' }>,
    ids: (number | null)[],
  ): Promise<void> {
    const port = observerCorrections();
    const proposals = outcome.corrections
      .map((p) => ({ id: p.id, by: ids[p.observation] ?? null, reason: p.reason }))
      .filter((p): p is { id: number; by: number; reason: string } => p.by !== null);
    if (!port || !proposals.length) return;
    const owner = { teamId: c.teamId, userId: c.authorUserId, projectId: c.projectId };
    await port
      .apply(this.deps.env, owner, proposals, this.#shown, this.#now())
      .catch((err: unknown) => log('warn', 'observer corrections not stored', { message: errorText(err) }));
  }

  /**
   * A prompt that arrived while the observer worked may have taken some of the turn's events (a late
   * private prompt above all). Then nothing of the turn is stored: the private prompt's events are dropped
   * and the others go back to be observed under their own prompt.
   */
  #refiledDuring(claimId: string, batch: PendingRow[]): boolean {
    const b = this.deps.buffer();
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
    const b = this.deps.buffer();
    b.confirm(claimId);
    if (state && b.get<number>('conversation_forgotten', 0) === this.#forgotten) b.set('conversation', state);
    b.bump('turns');
    if (stored) b.bump('observations_stored', stored);
    b.set('streak', 0);
  }

  /** The events of a turn whose object died MAX_TURN_DEATHS times go to the dead letters, with the reason. */
  #buried(claimId: string, deaths: number): void {
    const b = this.deps.buffer();
    const reason = `the session object died during this turn ${deaths} times (a turn past 30 s of CPU or 128 MB of memory is cut off with its object); not sent to the observer again`;
    const events = b.deadLetterClaim(claimId, reason, Date.now());
    b.set('last_error', reason);
    log('error', 'an observer turn killed its session object every time; its events are dead letters', {
      claim_id: claimId,
      events,
      deaths,
      team_id: sessionOf(b)?.teamId,
    });
  }

  /** Gives the claimed events back (counting the attempt when the failure says so) and backs the session off. */
  async #fail(claimId: string, kind: FailureKind, retryAfterMs: number | null, err: unknown): Promise<void> {
    const b = this.deps.buffer();
    const streak = b.get<number>('streak', 0);
    const plan = planFailure(kind, retryAfterMs, streak);
    const message = `${kind}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
    // A refusal read from the observer's own reply (no provider code) would put its words in the log: not logged.
    const said =
      err instanceof ObserverFailure && err.code === null && (kind === 'auth' || kind === 'spend_cap')
        ? undefined
        : errorText(err);
    const fields = {
      claim_id: claimId,
      kind,
      code: err instanceof ObserverFailure ? err.code : null,
      message: said,
      team_id: sessionOf(b)?.teamId,
    };
    if (kind === 'store' || kind === 'server' || kind === 'network') log('error', 'observer turn failed', fields);
    else log('warn', 'observer turn backing off', { ...fields, delay_ms: plan.delayMs });
    const until = Date.now() + plan.delayMs;
    b.release(claimId, plan.countsAttempt, message, kind === 'store');
    b.set('streak', streak + 1);
    b.set('backoff_until', until);
    b.set('last_error', message);
    const session = sessionOf(b);
    if (plan.shared && session) {
      // Awaited (it is one small RPC) so that other sessions of the team see it before this turn ends. The
      // team's answer says when to try again: a back-off's end, or the next probe of a failing observer.
      const code = err instanceof ObserverFailure ? err.code : null;
      const team = await teamStub(this.deps.env, session.teamId)
        .reportFailure({ kind: plan.shared, code, detail: code && err instanceof Error ? err.message : null, until })
        .catch((e: unknown) => log('warn', 'team back-off report failed', { message: errorText(e) }));
      if (team) b.set('backoff_until', team.until);
    }
  }

  /**
   * This turn was the probe of a failing observer and its call went through: the team is told, and the
   * sessions it held back are woken at once instead of at their next try.
   */
  async #recovered(teamId: number): Promise<void> {
    if (!this.#probe || !this.#askedProvider) return;
    this.#probe = false;
    const waiting = await teamStub(this.deps.env, teamId)
      .reportRecovered()
      .catch((e: unknown) => {
        log('warn', 'observer recovery report failed', { message: errorText(e) });
        return [] as string[];
      });
    const own = sessionOf(this.deps.buffer())?.sessionKey;
    const others = waiting.filter((k) => k !== own);
    if (others.length) this.deps.wake(teamId, others);
  }

  #seam(point: FaultPoint): void {
    if (this.deps.seams().fault?.(point) === 'crash') throw new Abandoned();
  }

  #now(): number {
    return this.deps.seams().now?.() ?? Date.now();
  }

  /**
   * The configured provider, or the heuristic one while the team's observer budget for the day or month is
   * spent. The state is kept (`budget`) so status and the context index can say so.
   */
  async #budgetedProvider(teamId: number): Promise<ObserverProvider> {
    const configured = this.#provider();
    if (configured.name === 'heuristic') return configured;
    const budget = await teamBudget(await teamDb(this.deps.env, teamId), teamId, this.#now()).catch((err: unknown) => {
      log('warn', 'observer budget unknown; observing as configured', { message: errorText(err) });
      return null;
    });
    this.deps.buffer().set('budget', budget?.exhausted ? { exhausted: budget.exhausted, until: budget.until } : null);
    return budget?.exhausted ? (this.#heuristic ??= createHeuristicProvider()) : configured;
  }

  #provider(): ObserverProvider {
    return this.deps.seams().provider ?? (this.#providerCache ??= createProvider(this.deps.env));
  }
}
