// The one path every ingest event takes (single routes and batch replay): gate, clean, resolve project and
// session, hand to the SessionDO, and record what D1 must know at once (prompt rows, session end).
import type { AuthContext } from '../auth/types';
import { ensureProject, type ProjectRef } from '../db/projects';
import type { TeamSettings } from '../db/team-settings';
import { modeIdFor } from '../recall/mode';
import type { CairnEnv } from '../env';
import { isFullyPrivate, isTaskNotificationOnly } from '#shared/tags';
import { cleanField, serializeField } from '#shared/truncate';
import { sessionStub } from '../session/session-do';
import type { EnqueueInput, EventSnapshot } from '../session/types';
import { ensureSessionRow, markSessionEnded, storePrompt } from '../store/sessions';
import { serverGate, type GateSettings } from '../gate/gate';
import { TtlCache } from './cache';
import type { EventAck, IngestEvent } from './schemas';

export interface IngestContext {
  env: CairnEnv;
  auth: AuthContext;
  settings: TeamSettings;
  now: number;
}

/** One SessionDO per team and agent session. */

// A session row never changes owner or id, and a project key keeps its id unless projects are merged (then
// events keep landing on the old id for at most a minute). Both lookups are per user, so a cached answer
// never skips the ownership and visibility checks of another caller.
const projects = new TtlCache<ProjectRef>(60_000);
const sessionRows = new TtlCache<number>(10 * 60_000);

/** Server-side cleaning (the client already did it; this copy is the authoritative one): cut, then strip. */
const clean = (text: string) => cleanField(text);

export async function acceptEvent(ctx: IngestContext, e: IngestEvent): Promise<EventAck> {
  const skipped = skipReason(ctx, e);
  if (skipped) return { accepted: false, duplicate: false, skipped };
  const snapshot = await resolveSession(ctx, e);
  const { input, promptText } = enqueueInput(e, {
    eventId: e.event_id,
    occurredAt: e.occurred_at,
    snapshot,
    modeId: modeIdFor(ctx.env, ctx.settings),
    promptId: e.prompt_id ?? null,
    clientSeq: e.client_seq ?? null,
  });
  const result = await sessionStub(ctx.env, ctx.auth.teamId, e.session_id).enqueue(input);
  // Also done for repeats: if an earlier attempt died after the DO accepted it, this completes the write.
  await writeSessionRows(ctx, e, snapshot, result.promptNumber, promptText);
  const ack: EventAck = { accepted: result.accepted, duplicate: result.duplicate };
  if (result.skipped) ack.skipped = result.skipped;
  if (e.kind === 'init') ack.prompt_number = result.promptNumber;
  return ack;
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

/** The project and `sessions` row the event belongs to (created on first sight), as the DO will need them. */
async function resolveSession(ctx: IngestContext, e: IngestEvent): Promise<EventSnapshot> {
  const { env, auth } = ctx;
  const project = await projects.getOrLoad(`${auth.teamId}:${auth.userId}:${e.project}`, ctx.now, () => ensureProject(env.DB, auth, e.project, ctx.now));
  const sessionDbId = await sessionRows.getOrLoad(`${auth.teamId}:${auth.userId}:${e.session_id}`, ctx.now, () =>
    ensureSessionRow(env.DB, {
      teamId: auth.teamId,
      sessionKey: e.session_id,
      projectId: project.id,
      projectKey: project.key,
      userId: auth.userId,
      deviceId: auth.deviceId,
      platform: e.platform,
      startedAt: e.occurred_at,
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

type EnqueueCommon = Pick<EnqueueInput, 'eventId' | 'occurredAt' | 'snapshot' | 'modeId' | 'promptId' | 'clientSeq'>;

/** What the session's Durable Object is given, every text field cleaned; the prompt text null when private. Pure. */
function enqueueInput(e: IngestEvent, common: EnqueueCommon): { input: EnqueueInput; promptText: string | null } {
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
          cwd: e.cwd,
          projectRoot: e.project_root ?? null,
          toolUseId: e.tool_use_id ?? null,
          agentId: e.agent_id ?? null,
          agentType: e.agent_type ?? null,
        },
        promptText: null,
      };
    case 'summarize':
      return { input: { ...common, kind: 'summarize', lastAssistantMessage: clean(e.last_assistant_message), agentId: e.agent_id ?? null }, promptText: null };
    case 'end':
      return { input: { ...common, kind: 'end' }, promptText: null };
  }
}

/** The D1 rows an event completes: the prompt of an init (its text only when not private), the end of a session. */
async function writeSessionRows(ctx: IngestContext, e: IngestEvent, snapshot: EventSnapshot, promptNumber: number, promptText: string | null): Promise<void> {
  const { env, auth } = ctx;
  if (e.kind === 'init') {
    await storePrompt(env.DB, {
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
    await markSessionEnded(env.DB, snapshot.sessionDbId, e.occurred_at);
  }
}
