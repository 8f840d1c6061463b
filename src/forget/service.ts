// Forget that forgets: a record, a session or a project is deleted from every D1 table, the FTS indexes
// (delete triggers), the vector index and the session's Durable Object. Only an audit row stays: who forgot
// which id and when, never the text (a reason given for the audit is not kept either: it may repeat it).
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import {
  canSee,
  countProject,
  deleteObservations,
  deletePrompt,
  deleteSession,
  deleteSummary,
  findObservation,
  findPrompt,
  findSession,
  findSummary,
  recordIdsOf,
  projectVisible,
  sessionKeysOfRecords,
  type ForgetCounts,
  type ForgettableRow,
  type RecordKind,
} from '../db/forget';
import { resolveVisibleProjects } from '../db/projects';
import { settingsFor } from '../db/team-settings';
import { hasAdminPower, viewerOf } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors, type RecordIds } from '../vectors/index-records';
import { requestFtsUpkeep } from '../search/fts-upkeep';
import { startJob, wireJob } from '../jobs/start';
import type { WireJob } from '#shared/jobs';
import { forgetProjectJob } from './project-job';
import { sessionStub } from '../session/session-do';
// Every forget passes the team's write gate: refused with 503 team_moving while a move has the team's writes
// closed (its last round copies what is left); before that the move's change log carries a forget to the new
// database.
import { teamRowsDeleted, writableTeamDb } from '../slots/enter-write';
import { sourcesOf } from '../db/consolidation';

/** `12`, `#12` or `O12` name an observation; `S12` a summary; `P12` a prompt (as search shows them). */
export function parseRecordRef(ref: string | number): { kind: RecordKind; id: number } | null {
  if (typeof ref === 'number') return Number.isSafeInteger(ref) && ref > 0 ? { kind: 'observation', id: ref } : null;
  const m = /^\s*(#|o|s|p)?(\d{1,15})\s*$/i.exec(ref);
  if (!m) return null;
  const id = Number(m[2]);
  if (!Number.isSafeInteger(id) || id <= 0) return null;
  const tag = (m[1] ?? '').toLowerCase();
  return { kind: tag === 's' ? 'summary' : tag === 'p' ? 'prompt' : 'observation', id };
}

export const ForgetBody = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.enum(['observation', 'summary', 'prompt']),
      id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    })
    .strict(),
  z.object({ kind: z.literal('session'), session_id: z.string().trim().min(1).max(200) }).strict(),
  z
    .object({
      kind: z.literal('project'),
      project: z.string().trim().min(1).max(500),
      confirm: z.number().int().nonnegative().optional(),
    })
    .strict(),
]);
export type ForgetBody = z.infer<typeof ForgetBody>;

export interface Forgotten {
  kind: ForgetBody['kind'];
  target: string;
  counts: ForgetCounts;
  /** A project: the job deleting it (the counts are what it will delete). */
  job?: WireJob;
}

const none = (): ForgetCounts => ({ observations: 0, summaries: 0, prompts: 0, sessions: 0 });

/**
 * Vectors live outside D1 (Vectorize in production): removed after the rows, never blocking the answer on text.
 * Every kind and every part goes (an observation's main text and each fact vector).
 */
async function dropVectors(env: CairnEnv, teamId: number, ids: RecordIds): Promise<void> {
  await deleteRecordVectors(getVectorAdapters(env), teamId, ids);
}

/** The session's Durable Object may still hold buffered tool input/output and prompt texts. */
async function wipeSessionObject(env: CairnEnv, teamId: number, sessionKey: string): Promise<void> {
  await sessionStub(env, teamId, sessionKey).forgetAll();
}

/** Sessions whose objects hold forgotten records' text in the observer conversation: each drops its conversation. */
async function forgetConversations(env: CairnEnv, teamId: number, sessionKeys: string[]): Promise<void> {
  for (const key of sessionKeys) await sessionStub(env, teamId, key).forgetConversation();
}

const FINDERS: Record<RecordKind, (db: D1Database, teamId: number, id: number) => Promise<ForgettableRow | null>> = {
  observation: findObservation,
  summary: findSummary,
  prompt: findPrompt,
};

const NAMES: Record<RecordKind, string> = { observation: 'observation', summary: 'summary', prompt: 'prompt' };

export async function forgetRecord(
  env: CairnEnv,
  auth: AuthContext,
  kind: RecordKind,
  id: number,
  now: number,
): Promise<Forgotten> {
  const d = await writableTeamDb(env, auth.teamId);
  const viewer = viewerOf(auth, await settingsFor(d, auth));
  const row = (await canSee(d, viewer, kind, id)) ? await FINDERS[kind](d, auth.teamId, id) : null;
  const label = `${NAMES[kind]} ${kind === 'observation' ? '#' : kind === 'summary' ? 'S' : 'P'}${id}`;
  if (!row) throw new AppError(404, 'not_found', `No ${label}.`);
  if (row.authorUserId !== auth.userId && !hasAdminPower(auth)) {
    throw new AppError(
      403,
      'not_allowed',
      `Only the author of the ${NAMES[kind]} or a team admin (with an admin-scoped token) can forget it.`,
    );
  }
  const audit = {
    actorUserId: auth.userId,
    target: `${kind}:${id}`,
    detail: { project_id: row.projectId, author_user_id: row.authorUserId },
    at: now,
  };
  const counts = none();
  // A record that stands for merged near-duplicates (src/consolidation/) takes them along: they are its text too.
  const ids = kind === 'observation' ? [id, ...(await sourcesOf(d, auth.teamId, [id]))] : [id];
  const holders = await sessionKeysOfRecords(d, auth.teamId, kind, ids);
  if (kind === 'observation') counts.observations = await deleteObservations(d, auth.teamId, ids, audit);
  else if (kind === 'summary') counts.summaries = await deleteSummary(d, auth.teamId, id, audit);
  else counts.prompts = await deletePrompt(d, auth.teamId, id, audit);
  await dropVectors(env, auth.teamId, {
    [kind === 'observation' ? 'observations' : kind === 'summary' ? 'summaries' : 'prompts']: ids,
  });
  await requestFtsUpkeep(env, auth.teamId);
  await forgetConversations(env, auth.teamId, holders);
  return { kind, target: `${kind}:${id}`, counts };
}

export async function forgetSession(
  env: CairnEnv,
  auth: AuthContext,
  sessionKey: string,
  now: number,
): Promise<Forgotten> {
  const d = await writableTeamDb(env, auth.teamId);
  const session = await findSession(d, auth.teamId, sessionKey);
  const visible = session ? await projectVisible(d, auth.teamId, auth.userId, session.projectId) : false;
  if (!session || !visible) throw new AppError(404, 'not_found', 'No such session.');
  if (session.userId !== auth.userId && !hasAdminPower(auth))
    throw new AppError(
      403,
      'not_allowed',
      'Only the person who ran a session or a team admin (with an admin-scoped token) can forget it.',
    );
  const ids = await recordIdsOf(d, auth.teamId, { sessionId: session.id });
  // Records of other sessions merged into this one's (src/consolidation/) are its text too: they go with it.
  const own = new Set(ids.observations);
  const merged = (await sourcesOf(d, auth.teamId, ids.observations)).filter((x) => !own.has(x));
  const holders = (await sessionKeysOfRecords(d, auth.teamId, 'observation', merged)).filter((k) => k !== sessionKey);
  const counts = await deleteSession(d, auth.teamId, session, merged, {
    actorUserId: auth.userId,
    target: `session:${session.id}`,
    detail: { project_id: session.projectId, user_id: session.userId },
    at: now,
  });
  await teamRowsDeleted(env, auth.teamId);
  await requestFtsUpkeep(env, auth.teamId);
  await dropVectors(env, auth.teamId, { ...ids, observations: [...ids.observations, ...merged] });
  await wipeSessionObject(env, auth.teamId, sessionKey);
  await forgetConversations(env, auth.teamId, holders);
  return { kind: 'session', target: `session:${session.id}`, counts };
}

/**
 * A whole project: its admin (or the owner of a private project) asks once and is told how much would go;
 * the deletion happens when the request repeats that count as `confirm`.
 */
export async function forgetProject(
  env: CairnEnv,
  auth: AuthContext,
  key: string,
  confirm: number | undefined,
  now: number,
): Promise<Forgotten> {
  const d = await writableTeamDb(env, auth.teamId);
  const [project] = await resolveVisibleProjects(d, auth, [key]);
  if (!project) throw new AppError(404, 'not_found', `No project "${key}".`);
  const mayDelete =
    project.visibility === 'private' ? project.ownerUserId === auth.userId || hasAdminPower(auth) : hasAdminPower(auth);
  if (!mayDelete)
    throw new AppError(
      403,
      'not_admin',
      'Only a team admin with an admin-scoped token (or the owner of a private project) can forget a project.',
    );
  const counts = await countProject(d, auth.teamId, project.id);
  const total = counts.observations + counts.summaries + counts.prompts;
  if (confirm !== total) {
    throw new AppError(
      409,
      'confirm_required',
      `Forgetting "${project.key}" deletes ${counts.observations} observations, ${counts.summaries} summaries and ${counts.prompts} prompts ` +
        `in ${counts.sessions} sessions. Send the request again with "confirm": ${total}.`,
    );
  }
  return purgeProject(env, auth.teamId, { userId: auth.userId, handle: auth.handle }, project.id, project.key, now);
}

/**
 * Deletes a project and everything in it (no permission check: callers decide) as a `forget-project` job
 * (src/forget/project-job.ts): answered at once with the job, whose progress GET /api/jobs/:id shows; the
 * counts are what the job will delete.
 */
export async function purgeProject(
  env: CairnEnv,
  teamId: number,
  actor: { userId: number; handle: string },
  projectId: number,
  key: string,
  _now: number,
): Promise<Forgotten> {
  const d = await writableTeamDb(env, teamId);
  const counts = await countProject(d, teamId, projectId);
  const total = counts.observations + counts.summaries + counts.prompts;
  const job = await startJob(env, forgetProjectJob, teamId, { projectId, key, total }, actor);
  return { kind: 'project', target: `project:${key}`, counts, job: wireJob(job) };
}
