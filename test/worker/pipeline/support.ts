// Helpers for pipeline tests: build and send hook events, script the fake observer, wait for a session to settle.
import { sessionStub as stubOfSession, type SessionDO } from '../../../src/session/session-do';
import { teamStub as stubOfTeam } from '../../../src/slots/team-do';
import { env } from 'cloudflare:workers';
import { call, fresh } from '../support/http';
import type { FakeResponse } from '../../support/fake-llm';
import { tokenByHash } from '../../../src/db/tokens';
import { sha256Hex } from '../../../src/lib/crypto';

export interface Sent {
  status: number;
  body: Record<string, unknown>;
}

export async function send(
  token: string,
  route: 'init' | 'observations' | 'summarize' | 'end',
  body: Record<string, unknown>,
): Promise<Sent> {
  const res = await call(`/api/sessions/${route}`, { token, json: body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export const base = (sessionId: string, project = 'github.com/acme/widgets') => ({
  session_id: sessionId,
  project,
  cwd: '/home/dev/widgets',
  occurred_at: Date.now(),
});

export const initEvent = (sessionId: string, prompt: string, extra: Record<string, unknown> = {}) => ({
  ...base(sessionId),
  event_id: fresh('ev'),
  prompt,
  ...extra,
});

export const toolEvent = (sessionId: string, command: string, extra: Record<string, unknown> = {}) => ({
  ...base(sessionId),
  event_id: fresh('ev'),
  tool_name: 'Bash',
  tool_input: { command },
  tool_response: { stdout: `ran ${command}`, exit_code: 0 },
  tool_use_id: fresh('tu'),
  ...extra,
});

export type { FakeResponse };

/** Scripts the fake observer for requests naming `id`; `hold` keeps them unanswered until `release(id)`. */
export async function script(
  id: string,
  responses: FakeResponse[],
  delayMs = 0,
  opts: { hold?: boolean } = {},
): Promise<void> {
  await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`, {
    method: 'POST',
    body: JSON.stringify({ responses, delayMs, hold: opts.hold === true }),
  });
}

/** Answers the scenario's held requests (and every later one at once). */
export async function release(id: string): Promise<void> {
  await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}/release`, { method: 'POST' });
}

export interface RecordedRequest {
  path: string;
  at: number;
  answeredAt?: number;
  body: { model?: string; system?: unknown; messages: { role: string; content: unknown }[] };
}

export async function recorded(id: string): Promise<RecordedRequest[]> {
  const res = await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`);
  return ((await res.json()) as { requests: RecordedRequest[] }).requests;
}

/** The scenario's requests once at least `n` have reached the fake observer (it answers when they have). */
export async function arrived(id: string, n: number): Promise<RecordedRequest[]> {
  const res = await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}?arrived=${n}`);
  return ((await res.json()) as { requests: RecordedRequest[] }).requests;
}

/** Text of the last user message of a recorded request: the batch that turn was about. */
export function lastUserText(req: RecordedRequest): string {
  const msgs = req.body.messages;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return (m.content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
  }
  return '';
}

export interface Status {
  session_id: string;
  pending: number;
  in_flight: number;
  turns: number;
  observations_stored: number;
  dead_letters: { event_id: string; kind: string; attempts: number; last_error: string | null }[];
  backoff_until: number | null;
  last_error: string | null;
}

export async function status(token: string, sessionId: string): Promise<Status> {
  const res = await call(`/api/sessions/${encodeURIComponent(sessionId)}/status`, { token });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  return (await res.json()) as Status;
}

/** What a session's Durable Object holds, read in one step inside it (no other event runs in between). */
interface Look {
  status: Status;
  /** A live lease with no events claimed: a turn is starting (asking for its slot) or ending (planning its next alarm). */
  between: boolean;
  alarm: number | null;
}

async function look(stub: ReturnType<typeof sessionStub>, sessionId: string): Promise<Look> {
  return insideSession(stub, async (instance, state) => {
    const s = await instance.status();
    const lease = state.storage.sql
      .exec<{ expires_at: number }>('SELECT expires_at FROM lease WHERE instance_id = ?', instance.instanceId)
      .toArray()[0];
    const leased = lease !== undefined && lease.expires_at > Date.now();
    return {
      status: { session_id: sessionId, ...s },
      between: leased && s.in_flight === 0,
      alarm: await state.storage.getAlarm(),
    };
  });
}

/** Alarms fired by waitFor that have not returned yet (a turn held by the fake observer), by session object. */
const firing = new Map<string, Promise<unknown>>();
/** A fired alarm that threw: the next waitFor of that session reports it. */
const fired = new Map<string, unknown>();

function fire(key: string, stub: ReturnType<typeof sessionStub>): Promise<unknown> {
  const run = (async () => {
    const { runDurableObjectAlarm } = await import('cloudflare:test');
    try {
      await runDurableObjectAlarm(stub);
    } catch (err) {
      fired.set(key, err);
    } finally {
      firing.delete(key);
    }
  })();
  firing.set(key, run);
  return run;
}

/**
 * Fires the session's pending alarm now without waiting for its turn to end (a turn held by the fake observer
 * ends only on release); a later waitFor of the session waits for it.
 */
export function startAlarm(teamId: number, sessionKey: string): void {
  const stub = sessionStub(teamId, sessionKey);
  const key = stub.id.toString();
  if (!firing.has(key)) void fire(key, stub);
}

/** The team a token belongs to (waitFor needs it to name the session's Durable Object). */
const teams = new Map<string, number>();
async function teamOfToken(token: string): Promise<number> {
  const known = teams.get(token);
  if (known !== undefined) return known;
  const row = await tokenByHash(env.DB, await sha256Hex(token));
  if (!row) throw new Error('waitFor: unknown token');
  teams.set(token, row.teamId);
  return row.teamId;
}

/** How long waitFor yields while the work waits on I/O (an observer answer, another session's slot). */
const IO_PAUSE_MS = 20;
const pause = () => new Promise((r) => setTimeout(r, IO_PAUSE_MS));

/**
 * Drives the session until the predicate holds and no turn is half begun or half ended, then returns its status.
 * Its pending alarm is fired at once (runDurableObjectAlarm) instead of waiting for its time: events gathering
 * for a turn, a turn refused a team slot. It yields only while a turn waits on I/O (the observer's answer,
 * held by a test) or while the session backs off (the test lifts that itself: runAlarmNow), and fails with the
 * last status after `timeoutMs`, a bound on a stall, not a speed claim.
 */
export async function waitFor(
  token: string,
  sessionId: string,
  done: (s: Status) => boolean,
  timeoutMs = 15_000,
): Promise<Status> {
  const stub = sessionStub(await teamOfToken(token), sessionId);
  const key = stub.id.toString();
  const until = Date.now() + timeoutMs;
  let idle: string | null = null;
  for (;;) {
    const failure = fired.get(key);
    if (failure !== undefined) {
      fired.delete(key);
      throw failure;
    }
    const now = await look(stub, sessionId);
    if (done(now.status) && !now.between) return now.status;
    if (Date.now() > until) throw new Error(`timed out; last status ${JSON.stringify(now)}`);
    const running = firing.get(key);
    const seen = JSON.stringify(now.status);
    if (running) await Promise.race([running, pause()]);
    else if (now.between || now.status.in_flight > 0 || now.alarm === null || now.status.backoff_until !== null)
      await pause();
    else if (idle === seen) {
      // The last alarm changed nothing (a full team refused the slot): the work waits on other sessions.
      idle = null;
      await pause();
    } else {
      idle = seen;
      await Promise.race([fire(key, stub), pause()]);
    }
  }
}

export const settled = (s: Status) => s.pending === 0 && s.in_flight === 0;

/** The SessionDO of a session, as the ingest routes name it. */
export const sessionStub = (teamId: number, sessionKey: string) => stubOfSession(env, teamId, sessionKey);
export const teamStub = (teamId: number) => stubOfTeam(env, teamId);

/** Time passes: the session's and the team's back-off are over. */
export async function liftBackoff(teamId: number, sessionKey: string): Promise<void> {
  const { runInDurableObject } = await import('cloudflare:test');
  await runInDurableObject(sessionStub(teamId, sessionKey), (_i, state) => {
    state.storage.sql.exec("UPDATE meta SET v = '0' WHERE k = 'backoff_until'");
  });
  await teamStub(teamId).clearBackoff();
}

/** Runs the session's scheduled alarm now (after lifting any back-off); false when none was scheduled. */
export async function runAlarmNow(teamId: number, sessionKey: string): Promise<boolean> {
  const { runDurableObjectAlarm } = await import('cloudflare:test');
  await liftBackoff(teamId, sessionKey);
  return runDurableObjectAlarm(sessionStub(teamId, sessionKey));
}

/** Observations stored for a session: all rows, and distinct titles (equal when nothing is duplicated). */
export async function countRows(sessionKey: string): Promise<{ total: number; distinct: number }> {
  const row = await env.DB.prepare(
    `SELECT COUNT(*) AS total, COUNT(DISTINCT o.title) AS distinct_titles FROM observations o
       JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?`,
  )
    .bind(sessionKey)
    .first<{ total: number; distinct_titles: number }>();
  return { total: row?.total ?? 0, distinct: row?.distinct_titles ?? 0 };
}

/** Runs code inside a session's Durable Object with its real class type. */
export async function insideSession<R>(
  stub: ReturnType<typeof sessionStub>,
  fn: (instance: SessionDO, state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  const { runInDurableObject } = await import('cloudflare:test');
  return runInDurableObject(stub, (instance, state) => fn(instance as unknown as SessionDO, state));
}

/**
 * Holds the session's turn lease as a long observer turn of its live instance would: alarms observe nothing
 * until the lease is dropped (`DELETE FROM lease`) or the object restarts.
 */
export async function holdLease(teamId: number, sessionKey: string): Promise<void> {
  await insideSession(sessionStub(teamId, sessionKey), (instance, state) => {
    state.storage.sql.exec(
      "INSERT INTO lease (id, claim_id, expires_at, instance_id) VALUES (1, 'test-hold', ?1, ?2) ON CONFLICT(id) DO UPDATE SET claim_id = 'test-hold', expires_at = ?1, instance_id = ?2",
      Date.now() + 3_600_000,
      instance.instanceId,
    );
  });
}
