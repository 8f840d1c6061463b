// Helpers for pipeline tests: build and send hook events, script the fake observer, wait for a session to settle.
import { sessionStub as stubOfSession, type SessionDO } from '../../../src/session/session-do';
import { teamStub as stubOfTeam } from '../../../src/slots/team-do';
import { env } from 'cloudflare:workers';
import { call, fresh } from '../support/http';
import type { FakeResponse } from '../../support/fake-llm';

export interface Sent {
  status: number;
  body: Record<string, unknown>;
}

export async function send(token: string, route: 'init' | 'observations' | 'summarize' | 'end', body: Record<string, unknown>): Promise<Sent> {
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
export async function script(id: string, responses: FakeResponse[], delayMs = 0, opts: { hold?: boolean } = {}): Promise<void> {
  await fetch(`${env.FAKE_LLM_URL}/__scenario/${id}`, { method: 'POST', body: JSON.stringify({ responses, delayMs, hold: opts.hold === true }) });
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

/** Polls until the predicate holds (alarms run on their own in workerd); fails with the last status. */
export async function waitFor(token: string, sessionId: string, done: (s: Status) => boolean, timeoutMs = 15_000): Promise<Status> {
  const until = Date.now() + timeoutMs;
  let last = await status(token, sessionId);
  while (!done(last)) {
    if (Date.now() > until) throw new Error(`timed out; last status ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
    last = await status(token, sessionId);
  }
  return last;
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
export async function insideSession<R>(stub: ReturnType<typeof sessionStub>, fn: (instance: SessionDO, state: DurableObjectState) => R | Promise<R>): Promise<R> {
  const { runInDurableObject } = await import('cloudflare:test');
  return runInDurableObject(stub, (instance, state) => fn(instance as unknown as SessionDO, state));
}
