// The one path every ingest event takes (single routes and batch replay): gate, clean, resolve project and
// session, hand to the SessionDO, and record what D1 must know at once (prompt rows, session end).
import type { AuthContext } from '../auth/types';
import { ensureProject, type ProjectRef } from '../db/projects';
import { storedProjectKey, writeRefusal, type WriteRefusal } from '../db/write-policy';
import { capturePolicy } from '#shared/capture';
import type { TeamSettings } from '../db/team-settings';
import { modeIdFor } from '../recall/mode';
import type { CairnEnv } from '../env';
import { isFullyPrivate, isTaskNotificationOnly } from '#shared/tags';
import { redact, tallied, type RedactionTally } from '#shared/redact';
import { cleanField, serializeField } from '#shared/truncate';
import { inertLine, inertText } from '#shared/inert';
import { redactionAudit, writeAudit } from '../db/audit';
import { sessionStub } from '../session/session-do';
import type { EnqueueInput, EnqueueResult, EventSnapshot } from '../session/types';
import { ensureSessionRow, markSessionEnded, storePrompt } from '../store/sessions';
import { retentionMs } from '../session/retention';
import { storeSessionNote, TODOS_SOURCE, todosContent } from '../store/session-notes';
import { serverGate, type GateSettings } from '../gate/gate';
import { rateLimited } from '../limits/rate-limit';
import { teamMoving } from '../slots/enter-write';
import type { Verdict } from '../limits/window';
import { TtlCache } from './cache';
import type { EventAck, IngestEvent, SummarizeEvent } from './schemas';

export interface IngestContext {
  env: CairnEnv;
  auth: AuthContext;
  /** The team's database (src/db/shards.ts). */
  db: D1Database;
  /**
   * Its name, the time the last move put the team there and the team's row epoch (the team's write gate): keys this
   * isolate's id memos, so ids read from one database are never used on another, nor on the same one after a move
   * away and back (the team's rows there were deleted and copied back under new ids), nor after the session or
   * project they name was forgotten.
   */
  placement: string;
  settings: TeamSettings;
  now: number;
  /** Calls per minute one session accepts (the token's ingest limit, counted in the SessionDO). */
  ingestLimit: number;
}

/** Turned away at once, or what to send to the session (`session`: the agent's session id) and write after. */
type Prepared =
  | { ack: EventAck }
  | { session: string; input: EnqueueInput; finish: (result: EnqueueResult) => Promise<EventAck> };

// A session row never changes owner or id, and a project key keeps its id unless projects are merged (then
// events keep landing on the old id for at most a minute). Both lookups are per user, so a cached answer
// never skips the ownership and visibility checks of another caller.
const projects = new TtlCache<ProjectRef>(60_000);
const sessionRows = new TtlCache<number>(10 * 60_000);

/**
 * Server-side cleaning (the client already did it; this copy is the authoritative one): cut, strip memory tags,
 * take out control and bidi characters (src/shared/inert.ts), redact secrets (counted by kind into `tally`). Linear: each step runs over at most the field budget.
 */
const cleaner = (tally: RedactionTally) => (text: string) => redact(inertText(cleanField(text)), tally);
/** A path (cwd, project root): one inert line, redacted like the tool input whose paths it relativises. */
const pathCleaner = (tally: RedactionTally) => (path: string) => redact(inertLine(path), tally);

/** One event: one SessionDO round trip (admission and enqueue together). Throws 429 past the limit. */
export async function acceptEvent(
  ctx: IngestContext,
  e: IngestEvent,
): Promise<{ ack: EventAck; verdict: Verdict | null }> {
  const p = await prepare(ctx, e);
  if ('ack' in p) return { ack: p.ack, verdict: null };
  const admission = await sessionStub(ctx.env, ctx.auth.teamId, p.session).admit([p.input], ctx.ingestLimit);
  if (admission.movingUntil !== undefined) throw teamMoving(admission.movingUntil, Date.now());
  const result = admission.results[0];
  if (!result) throw rateLimited('ingest events in this session', admission.verdict);
  return { ack: await p.finish(result), verdict: admission.verdict };
}

/**
 * Spool replay: events are prepared one by one, then each session gets ONE SessionDO call with its events in
 * the order sent. Answers one settled result per event, in input order (one bad event does not stop the rest),
 * and the limit verdict of each session called.
 */
export async function acceptEvents(
  ctx: IngestContext,
  events: IngestEvent[],
): Promise<{ settled: PromiseSettledResult<EventAck>[]; verdicts: Verdict[] }> {
  const out: PromiseSettledResult<EventAck>[] = new Array(events.length);
  const bySession = new Map<string, { index: number; p: Extract<Prepared, { session: string }> }[]>();
  for (const [index, e] of events.entries()) {
    try {
      const p = await prepare(ctx, e);
      if ('ack' in p) out[index] = { status: 'fulfilled', value: p.ack };
      else bySession.set(p.session, [...(bySession.get(p.session) ?? []), { index, p }]);
    } catch (reason) {
      out[index] = { status: 'rejected', reason };
    }
  }
  const verdicts: Verdict[] = [];
  await Promise.all([...bySession].map(([session, group]) => admitGroup(ctx, session, group, out, verdicts)));
  return { settled: out, verdicts };
}

/** One SessionDO call for a session's events of a batch; fills their slots of `out`. */
async function admitGroup(
  ctx: IngestContext,
  session: string,
  group: { index: number; p: Extract<Prepared, { session: string }> }[],
  out: PromiseSettledResult<EventAck>[],
  limited: Verdict[],
): Promise<void> {
  let admission;
  try {
    admission = await sessionStub(ctx.env, ctx.auth.teamId, session).admit(
      group.map((g) => g.p.input),
      ctx.ingestLimit,
    );
  } catch (reason) {
    for (const g of group) out[g.index] = { status: 'rejected', reason };
    return;
  }
  if (admission.movingUntil !== undefined) {
    // The team started moving after the gate let this request in: its session object took nothing.
    for (const g of group) out[g.index] = { status: 'rejected', reason: teamMoving(admission.movingUntil, Date.now()) };
    return;
  }
  limited.push(admission.verdict);
  for (const [k, g] of group.entries()) {
    const result = admission.results[k];
    if (!result) {
      out[g.index] = { status: 'rejected', reason: rateLimited('ingest events in this session', admission.verdict) };
      continue;
    }
    try {
      out[g.index] = { status: 'fulfilled', value: await g.p.finish(result) };
    } catch (reason) {
      out[g.index] = { status: 'rejected', reason };
    }
  }
}

/** Everything before the SessionDO: gate, resolve project and session (memoised), clean. */
async function prepare(ctx: IngestContext, e: IngestEvent): Promise<Prepared> {
  const skipped = skipReason(ctx, e);
  if (skipped) return { ack: { accepted: false, duplicate: false, skipped } };
  const snapshot = await resolveSession(ctx, e);
  // The write policy (issue 38): a reader's events, and a non-writer's in a project with project_writers, are not
  // taken (no session row, no prompt, nothing buffered); their own private projects are theirs. Nor are anyone's
  // in a project whose capture policy is `off`.
  if ('refused' in snapshot) return { ack: { accepted: false, duplicate: false, skipped: snapshot.refused } };
  const tally: RedactionTally = {};
  const { input, promptText } = enqueueInput(e, cleaner(tally), pathCleaner(tally), {
    eventId: e.event_id,
    occurredAt: e.occurred_at,
    snapshot,
    modeId: modeIdFor(ctx.env, ctx.settings),
    promptId: e.prompt_id ?? null,
    clientSeq: e.client_seq ?? null,
    git: { branch: e.git_branch ?? null, commit: e.git_commit ?? null },
  });
  return {
    session: e.session_id,
    input,
    finish: async (result) => {
      // Also done for repeats: if an earlier attempt died after the DO accepted it, this completes the write.
      await writeSessionRows(ctx, e, snapshot, result.promptNumber, promptText);
      // The agent's open todos at this Stop, for a handoff; never those of a Stop the session did not take (a
      // private prompt's, a subagent's): the same rows written again are found by their content hash.
      if (e.kind === 'summarize' && e.todos !== undefined && result.accepted && !result.skipped)
        await storeOpenTodos(ctx, e, snapshot, result.promptNumber, cleaner(tally));
      // Counted once, by the call that stored the event (a repeat finds nothing new to count).
      if (result.accepted && !result.duplicate && tallied(tally)) {
        await writeAudit(ctx.db, redactionAudit(ctx.auth.teamId, ctx.auth.userId, 'ingest', tally, ctx.now));
      }
      const ack: EventAck = { accepted: result.accepted, duplicate: result.duplicate };
      if (result.skipped) ack.skipped = result.skipped;
      if (e.kind === 'init') ack.prompt_number = result.promptNumber;
      return ack;
    },
  };
}

/** Why the event is not taken at all (the team's gate, or protocol chatter), or null to take it. */
function skipReason(ctx: IngestContext, e: IngestEvent): string | null {
  const gate = serverGate(ctx.settings as GateSettings, {
    kind: e.kind,
    project: e.project,
    cwd: e.cwd,
    tool_name: e.kind === 'observation' ? e.tool_name : null,
    tool_input: e.kind === 'observation' ? e.tool_input : null,
  });
  if (!gate.allow) return gate.reason;
  if (e.kind === 'init' && isTaskNotificationOnly(e.prompt)) return 'internal_protocol';
  return null;
}

/** Why the project takes none of the caller's events: the write policy, or the admins' capture policy `off`. */
type Refusal = WriteRefusal | 'capture_off';

class Refused extends Error {
  constructor(readonly reason: Refusal) {
    super(reason);
  }
}

/**
 * The project and `sessions` row the event belongs to (created on first sight), as the DO will need them; or why
 * the write policy refuses the project (checked before a project is made, and again on a memoised one: the role
 * and the list come with this request's token).
 */
async function resolveSession(ctx: IngestContext, e: IngestEvent): Promise<EventSnapshot | { refused: Refusal }> {
  const { db, auth } = ctx;
  // Capture `off` (issue 38) for the key the client sent or the project it resolves to (a renamed project's old
  // key, the caller's shadow of it): asked before a project is made, so an old client that ignores the policy
  // leaves no row at all.
  const sent = storedProjectKey(e.project, auth.handle);
  const captureOff = (p: ProjectRef) =>
    capturePolicy(ctx.settings, [sent, p.key.replace(/#[^#]*$/, '')]) === 'off' ? 'capture_off' : null;
  const refusal = (p: ProjectRef): Refusal | null =>
    writeRefusal(auth, p, ctx.settings.project_writers) ?? captureOff(p);
  let project: ProjectRef;
  try {
    project = await projects.getOrLoad(`${ctx.placement}:${auth.teamId}:${auth.userId}:${e.project}`, ctx.now, () =>
      ensureProject(db, auth, e.project, ctx.now, 'team', (p) => {
        const r = refusal(p);
        if (r) throw new Refused(r);
      }),
    );
  } catch (err) {
    if (err instanceof Refused) return { refused: err.reason };
    throw err;
  }
  const refused = refusal(project);
  if (refused) return { refused };
  const sessionDbId = await sessionRows.getOrLoad(
    `${ctx.placement}:${auth.teamId}:${auth.userId}:${e.session_id}`,
    ctx.now,
    () =>
      ensureSessionRow(db, {
        teamId: auth.teamId,
        sessionKey: e.session_id,
        projectId: project.id,
        projectKey: project.key,
        userId: auth.userId,
        deviceId: auth.deviceId,
        platform: e.platform,
        startedAt: e.occurred_at,
        gitBranch: e.git_branch ?? null,
        gitCommit: e.git_commit ?? null,
      }),
  );
  return {
    teamId: auth.teamId,
    sessionKey: e.session_id,
    sessionDbId,
    projectId: project.id,
    projectKey: project.key,
    userId: auth.userId,
    deviceId: auth.deviceId,
  };
}

type EnqueueCommon = Pick<
  EnqueueInput,
  'eventId' | 'occurredAt' | 'snapshot' | 'modeId' | 'promptId' | 'clientSeq' | 'git'
>;

/** What the session's Durable Object is given, every text field cleaned; the prompt text null when private. Pure. */
function enqueueInput(
  e: IngestEvent,
  clean: (text: string) => string,
  path: (text: string) => string,
  common: EnqueueCommon,
): { input: EnqueueInput; promptText: string | null } {
  switch (e.kind) {
    case 'init': {
      const isPrivate = e.private || isFullyPrivate(e.prompt);
      const promptText = isPrivate ? null : clean(e.prompt);
      return { input: { ...common, kind: 'init', prompt: promptText ?? '', private: isPrivate }, promptText };
    }
    case 'observation':
      return {
        input: {
          ...common,
          kind: 'observation',
          toolName: e.tool_name,
          toolInput: clean(serializeField(e.tool_input)),
          toolResponse: clean(serializeField(e.tool_response ?? '')),
          cwd: path(e.cwd),
          projectRoot: e.project_root == null ? null : path(e.project_root),
          toolUseId: e.tool_use_id ?? null,
          agentId: e.agent_id ?? null,
          agentType: e.agent_type ?? null,
          ...(e.file_ids?.length
            ? {
                fileIds: e.file_ids.map((f) => ({
                  path: f.path,
                  blob: f.blob,
                  ws: f.ws ?? null,
                  base: f.base ?? null,
                })),
              }
            : {}),
        },
        promptText: null,
      };
    case 'summarize':
      return {
        input: {
          ...common,
          kind: 'summarize',
          lastAssistantMessage: clean(e.last_assistant_message),
          agentId: e.agent_id ?? null,
        },
        promptText: null,
      };
    case 'end':
      return { input: { ...common, kind: 'end' }, promptText: null };
  }
}

async function storeOpenTodos(
  ctx: IngestContext,
  e: SummarizeEvent,
  snapshot: EventSnapshot,
  promptNumber: number,
  clean: (text: string) => string,
): Promise<void> {
  const todos = (e.todos ?? [])
    .map((t) => ({ text: clean(t.text).replace(/\s+/g, ' ').trim(), status: t.status }))
    .filter((t) => t.text !== '');
  await storeSessionNote(
    ctx.db,
    {
      teamId: ctx.auth.teamId,
      projectId: snapshot.projectId,
      sessionDbId: snapshot.sessionDbId,
      authorUserId: ctx.auth.userId,
      deviceId: ctx.auth.deviceId,
      promptNumber,
      promptId: e.prompt_id ?? null,
      createdAt: e.occurred_at,
      gitBranch: e.git_branch ?? null,
      gitCommit: e.git_commit ?? null,
    },
    TODOS_SOURCE,
    todosContent(todos),
    'ingest',
    ctx.now,
  );
}

/** The D1 rows an event completes: the prompt of an init (its text only when not private), the end of a session. */
async function writeSessionRows(
  ctx: IngestContext,
  e: IngestEvent,
  snapshot: EventSnapshot,
  promptNumber: number,
  promptText: string | null,
): Promise<void> {
  const { db, auth } = ctx;
  if (e.kind === 'init') {
    await storePrompt(db, {
      teamId: auth.teamId,
      projectId: snapshot.projectId,
      sessionDbId: snapshot.sessionDbId,
      promptNumber,
      promptId: e.prompt_id ?? null,
      text: promptText,
      authorUserId: auth.userId,
      createdAt: e.occurred_at,
    });
  } else if (e.kind === 'end') {
    // The object empties itself this long after the end arrives (session/retention.ts); D1 keeps when, for the sweep.
    await markSessionEnded(
      db,
      snapshot.sessionDbId,
      e.occurred_at,
      ctx.now + retentionMs(ctx.env.SESSION_RETENTION_SECONDS),
    );
  }
}
