// Continue anywhere (issue 36): a session's handoff, read by key (the caller's own from any device, or a teammate's
// of a team project) or as the caller's latest in a project (`--last`), and handoff notes written into the caller's
// own live session. Reads go through the one visibility rule with held rows kept out (the handoff goes into an
// agent's context, as recall does); the note goes through the team's write gate and the one observation insert.
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { directoryDb, teamDb } from '../db/shards';
import { settingsFor } from '../db/team-settings';
import { viewerOf, type Viewer } from '../db/visibility';
import { mayWriteLiveSession } from '../db/write-policy';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { isBranchName, isCommitId, MAX_BRANCH_CHARS, type GitView } from '#shared/git';
import { modeIdFor, recallMode } from '../recall/mode';
import { writableTeamDb } from '../slots/enter-write';
import { HANDOFF_SOURCE, handoffContent, storeSessionNote } from '../store/session-notes';
import { handoffRows, latestOwnSession, sessionByKey, sessionForWrite } from './queries';
import { renderHandoff } from './render';

export interface HandoffRequest {
  /** The agent's session id; or `last` with a project: the caller's own latest session there. */
  session?: string;
  last?: boolean;
  project?: string;
  checkout: GitView | null;
  timeZone: string;
  maxChars: number;
  now: number;
}

export interface Handoff {
  session: string;
  project: string;
  author: string;
  device: string | null;
  platform: string;
  started_at: string;
  /** What the block holds: how many prompts, observations, open todos and notes. */
  counts: { prompts: number; observations: number; todos: number; notes: number; summary: boolean };
  text: string;
}

async function readerOf(env: CairnEnv, auth: AuthContext): Promise<{ d: D1Database; viewer: Viewer; modeId: string }> {
  const [settings, d] = await Promise.all([settingsFor(directoryDb(env), auth), teamDb(env, auth.teamId)]);
  // Into an agent's context: rows held back from the caller stay out, even for an admin (as in recall).
  return { d, viewer: { ...viewerOf(auth, settings), seesHeld: false }, modeId: modeIdFor(env, settings) };
}

const notFound = (what: string) => new AppError(404, 'not_found', what);

export async function handoffFor(env: CairnEnv, auth: AuthContext, r: HandoffRequest): Promise<Handoff> {
  const { d, viewer, modeId } = await readerOf(env, auth);
  let session;
  if (r.session) {
    session = await sessionByKey(d, viewer, r.session);
    if (!session) throw notFound('No session with that id that you may read.');
  } else {
    const projects = await resolveVisibleProjects(d, auth, r.project ? [r.project] : []);
    session = projects.length
      ? await latestOwnSession(
          d,
          viewer,
          projects.map((p) => p.id),
        )
      : undefined;
    if (!session) throw notFound('You have no recorded session in this project yet.');
  }
  const rows = await handoffRows(d, viewer, session.id);
  const text = renderHandoff({
    session: { ...session, device: session.device ?? null },
    ...rows,
    mode: recallMode(modeId),
    viewer: auth.handle,
    checkout: r.checkout,
    now: r.now,
    timeZone: r.timeZone,
    maxChars: r.maxChars,
  });
  return {
    session: session.key,
    project: session.project,
    author: session.author,
    device: session.device ?? null,
    platform: session.platform,
    started_at: new Date(session.startedAt).toISOString(),
    counts: {
      prompts: rows.prompts.length,
      observations: rows.work.length,
      todos: rows.todos ? JSON.parse(rows.todos.facts).length : 0,
      notes: rows.notes.length,
      summary: rows.summary !== null,
    },
    text,
  };
}

export const HandoffNoteBody = z
  .object({
    session_id: z.string().trim().min(1).max(200),
    text: z.string().trim().min(1, 'say what the next session needs to know').max(8_000, 'at most 8000 characters'),
    /** The checkout the note was written in (the ingest rule), so the handoff can say where it was. */
    git_branch: z.string().max(MAX_BRANCH_CHARS).refine(isBranchName, 'expected a git branch name').optional(),
    git_commit: z.string().max(64).refine(isCommitId, 'expected a full commit id').optional(),
  })
  .strict();
export type HandoffNoteBody = z.infer<typeof HandoffNoteBody>;

/**
 * `/cairn:handoff`, `cairn handoff`: a note written into the caller's own live session, for whoever continues it
 * (their next machine, a teammate). Only the session's own user may (its rows are theirs); an unknown session is
 * 404 (its events may not have reached the server yet: the client sends what it holds first).
 */
export async function writeHandoffNote(
  env: CairnEnv,
  auth: AuthContext,
  body: HandoffNoteBody,
  now: number,
): Promise<{ id: number; duplicate: boolean; session: string }> {
  const shard = await writableTeamDb(env, auth.teamId);
  const s = await sessionForWrite(shard, auth.teamId, body.session_id);
  if (!s) throw notFound('No session with that id has reached the server yet.');
  if (!mayWriteLiveSession(auth, s))
    throw new AppError(403, 'not_allowed', 'A handoff note goes into a session of your own.');
  const saved = await storeSessionNote(
    shard,
    {
      teamId: auth.teamId,
      projectId: s.projectId,
      sessionDbId: s.id,
      authorUserId: auth.userId,
      deviceId: auth.deviceId,
      promptNumber: 0,
      promptId: null,
      createdAt: now,
      gitBranch: body.git_branch ?? null,
      gitCommit: body.git_commit ?? null,
    },
    HANDOFF_SOURCE,
    handoffContent(body.text),
    'remember',
    now,
  );
  return { ...saved, session: body.session_id };
}
