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
  const { env, auth } = ctx;
  const gate = serverGate(ctx.settings as GateSettings, {
    kind: e.kind,
    project: e.project,
    cwd: e.cwd,
    tool_name: e.kind === 'observation' ? e.tool_name : null,
    tool_input: e.kind === 'observation' ? e.tool_input : null,
  });
  if (!gate.allow) return { accepted: false, duplicate: false, skipped: gate.reason };
  if (e.kind === 'init' && isTaskNotificationOnly(e.prompt)) return { accepted: false, duplicate: false, skipped: 'internal_protocol' };

  const project = await projects.getOrLoad(`${auth.teamId}:${auth.userId}:${e.project}`, ctx.now, () => ensureProject(env.DB, auth, e.project, ctx.now));
  const sessionDbId = await sessionRows.getOrLoad(`${auth.teamId}:${auth.userId}:${e.session_id}`, ctx.now, () =>
    ensureSessionRow(env.DB, {
      teamId: auth.teamId,
      sessionKey: e.session_id,
      projectId: project.id,
      userId: auth.userId,
      deviceId: auth.deviceId,
      platform: e.platform,
      startedAt: e.occurred_at,
    }),
  );
  const snapshot: EventSnapshot = {
    teamId: auth.teamId,
    sessionKey: e.session_id,
    sessionDbId,
    projectId: project.id,
    projectKey: project.key,
    userId: auth.userId,
    deviceId: auth.deviceId,
  };
  const common = {
    eventId: e.event_id,
    occurredAt: e.occurred_at,
    snapshot,
    modeId: modeIdFor(env, ctx.settings),
    promptId: e.prompt_id ?? null,
    clientSeq: e.client_seq ?? null,
  };

  let input: EnqueueInput;
  let promptText: string | null = null;
  switch (e.kind) {
    case 'init': {
      const isPrivate = e.private || isFullyPrivate(e.prompt);
      promptText = isPrivate ? null : clean(e.prompt);
      input = { ...common, kind: 'init', prompt: promptText ?? '', private: isPrivate };
      break;
    }
    case 'observation':
      input = {
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
      };
      break;
    case 'summarize':
      input = { ...common, kind: 'summarize', lastAssistantMessage: clean(e.last_assistant_message), agentId: e.agent_id ?? null };
      break;
    case 'end':
      input = { ...common, kind: 'end' };
      break;
  }

  const result = await sessionStub(env, auth.teamId, e.session_id).enqueue(input);
  // Also done for repeats: if an earlier attempt died after the DO accepted it, this completes the write.
  if (e.kind === 'init') {
    await storePrompt(env.DB, {
      teamId: auth.teamId,
      projectId: project.id,
      sessionDbId,
      promptNumber: result.promptNumber,
      promptId: e.prompt_id ?? null,
      text: promptText,
      authorUserId: auth.userId,
      createdAt: e.occurred_at,
    });
  } else if (e.kind === 'end') {
    await markSessionEnded(env.DB, sessionDbId, e.occurred_at);
  }
  const ack: EventAck = { accepted: result.accepted, duplicate: result.duplicate };
  if (result.skipped) ack.skipped = result.skipped;
  if (e.kind === 'init') ack.prompt_number = result.promptNumber;
  return ack;
}
