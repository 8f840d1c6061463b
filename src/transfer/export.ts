// GET /api/admin/export: the team's memory (or one project's) as NDJSON, streamed page by page so a large
// team never sits in memory. Projects the caller may not read (others' private ones) are left out.
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { fileIdsByObservation, type FileIdsOut } from './queries/file-ids';
import {
  sessionKeysByIds,
  type exportPage,
  type ExportedTable,
  type projectRow,
  type teamUsers,
} from './queries/transfer';
import { visibleProjectIds } from '../db/forget';
import { heldRowReadable, seesHeld } from '../db/visibility';
import { AppError } from '../lib/errors';
import { jsonList } from '../lib/json-list';
import type { ExportRecord } from './records';

/** The projects an export covers; resolved before the answer starts, so an unknown key is a plain 404. */
export async function exportProjects(db: D1Database, auth: AuthContext, projectKey: string | null): Promise<number[]> {
  if (projectKey === null) return visibleProjectIds(db, auth.teamId, auth.userId);
  const [p] = await resolveVisibleProjects(db, auth, [projectKey]);
  if (!p) throw new AppError(404, 'not_found', `No project "${projectKey}".`);
  return [p.id];
}

/**
 * Whether a row goes into the export. A member's export leaves out others' sensitive observations (as they
 * are only shown to their author) and rows held back from them (visibility.ts, `heldRowReadable`); a team
 * moving between databases takes everything (src/db/move.ts).
 */
export type ExportFilter = (o: {
  type?: string;
  authorUserId: number;
  heldKinds: string | null;
  releasedAt: number | null;
}) => boolean;

export const readerFilter = (auth: Pick<AuthContext, 'userId' | 'settings' | 'role' | 'scopes'>): ExportFilter => {
  const v = { userId: auth.userId, seesHeld: seesHeld(auth) };
  return (o) =>
    (o.type !== 'sensitive' || o.authorUserId === auth.userId || auth.settings?.share_sensitive === true) &&
    heldRowReadable(v, o);
};

type ProjectRow = NonNullable<Awaited<ReturnType<typeof projectRow>>>;
type Row<K extends ExportedTable> = Awaited<ReturnType<typeof exportPage<K>>>[number];
/** A user id as the export names it: by handle (a user gone from the team keeps a stable stand-in). */
export type Who = (id: number | null) => string | null;

export function whoOf(people: { id: number; handle: string }[]): Who {
  const handle = new Map(people.map((u) => [u.id, u.handle]));
  return (id) => (id === null ? null : (handle.get(id) ?? `user-${id}`));
}

/** One row of the team export as its record; the session's key is looked up by `keyOf` (rows name sessions by key). */
export const toRecord = {
  user: (u: Awaited<ReturnType<typeof teamUsers>>[number]): ExportRecord => ({
    kind: 'user',
    handle: u.handle,
    role: u.role,
    created_at: u.createdAt,
  }),
  project: (p: ProjectRow, who: Who): ExportRecord => ({
    kind: 'project',
    key: p.key,
    visibility: p.visibility,
    owner: who(p.ownerUserId),
    created_at: p.createdAt,
  }),
  session: (s: Row<'sessions'>, p: ProjectRow, who: Who): ExportRecord => ({
    kind: 'session',
    session_key: s.sessionKey,
    project: p.key,
    user: who(s.userId)!,
    platform: s.platform,
    prompt_count: s.promptCount,
    started_at: s.startedAt,
    ended_at: s.endedAt,
    git_branch: s.gitBranch,
    git_commit: s.gitCommit,
    imported_at: s.importedAt,
    imported_author: s.importedAuthor,
    retire_after: s.retireAfter,
  }),
  prompt: (r: Row<'prompts'>, keyOf: KeyOf, who: Who): ExportRecord => ({
    kind: 'prompt',
    ...base(r, keyOf, who),
    text: r.text,
  }),
  /** `ids`: the record's evidence ids by path (fileIdsByObservation); the field is left out when it has none. */
  observation: (o: Row<'observations'>, keyOf: KeyOf, who: Who, ids?: Record<string, FileIdsOut>): ExportRecord => ({
    kind: 'observation',
    ...base(o, keyOf, who),
    type: o.type,
    title: o.title,
    subtitle: o.subtitle,
    facts: jsonList(o.facts),
    narrative: o.narrative,
    concepts: jsonList(o.concepts),
    files_read: jsonList(o.filesRead),
    files_modified: jsonList(o.filesModified),
    discovery_tokens: o.discoveryTokens,
    content_hash: o.contentHash,
    agent_id: o.agentId,
    agent_type: o.agentType,
    source: o.source,
    git_branch: o.gitBranch,
    git_commit: o.gitCommit,
    ...(ids ? { file_ids: ids } : {}),
  }),
  summary: (s: Row<'summaries'>, keyOf: KeyOf, who: Who): ExportRecord => ({
    kind: 'summary',
    ...base(s, keyOf, who),
    request: s.request,
    investigated: s.investigated,
    learned: s.learned,
    completed: s.completed,
    next_steps: s.nextSteps,
    notes: s.notes,
    content_hash: s.contentHash,
  }),
};

export type KeyOf = (sessionId: number) => string;

/** A page of one table's rows of project `p` as records (the sessions they name looked up by id, once a page). */
export async function pageRecords(
  d1: D1Database,
  teamId: number,
  table: ExportedTable,
  rows: Row<ExportedTable>[],
  p: ProjectRow,
  who: Who,
): Promise<ExportRecord[]> {
  if (table === 'sessions') return (rows as Row<'sessions'>[]).map((s) => toRecord.session(s, p, who));
  const keys = await sessionKeysByIds(d1, teamId, [
    ...new Set(rows.map((r) => (r as { sessionId: number }).sessionId)),
  ]);
  const keyOf: KeyOf = (id) => keys.get(id) ?? `session-${id}`;
  if (table === 'prompts') return (rows as Row<'prompts'>[]).map((r) => toRecord.prompt(r, keyOf, who));
  if (table === 'observations') {
    // One statement more an observation page: the page's evidence ids.
    const obs = rows as Row<'observations'>[];
    const ids = await fileIdsByObservation(
      d1,
      teamId,
      obs.map((o) => o.id),
    );
    return obs.map((o) => toRecord.observation(o, keyOf, who, ids.get(o.id)));
  }
  return (rows as Row<'summaries'>[]).map((r) => toRecord.summary(r, keyOf, who));
}

interface RowFields {
  sessionId: number;
  promptNumber: number;
  promptId: string | null;
  authorUserId: number;
  createdAt: number;
  importedAuthor: string | null;
  releasedAt: number | null;
  releasedBy: number | null;
}

function base(r: RowFields, keyOf: KeyOf, who: Who) {
  return {
    session_key: keyOf(r.sessionId),
    prompt_number: r.promptNumber,
    prompt_id: r.promptId,
    author: who(r.authorUserId)!,
    created_at: r.createdAt,
    imported_author: r.importedAuthor,
    released_at: r.releasedAt,
    released_by: who(r.releasedBy),
  };
}

/** The records as an NDJSON byte stream. */
export function ndjsonStream(records: AsyncGenerator<ExportRecord>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    async pull(controller) {
      try {
        const batch: string[] = [];
        for (let i = 0; i < 200; i++) {
          const next = await records.next();
          if (next.done) {
            if (batch.length) controller.enqueue(enc.encode(batch.join('')));
            controller.close();
            return;
          }
          batch.push(`${JSON.stringify(next.value)}\n`);
        }
        controller.enqueue(enc.encode(batch.join('')));
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await records.return(undefined);
    },
  });
}
