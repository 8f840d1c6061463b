// Planning one import part: every line is resolved (projects, sessions, authors, repeats) by reads only, with
// the write policy's functions (src/db/write-policy.ts), before anything is written; src/transfer/import.ts then
// writes the plan in one batch. Two importers: a team member (an admin's POST /api/admin/import), whose rows
// are all their own, and the operator restoring a whole team verbatim (the team move).
import type { Caller } from '../db/caller';
import { getTeamSettings } from '../db/team-settings';
import { projectsByKeys } from '../db/projects';
import { syncTeamCopy, type TeamDbs } from '../db/shards';
import {
  addMissingMembers,
  heldRows,
  memberIds,
  sessionsByKeys,
  type KeyedSession,
  type NewProject,
  type NewSession,
  type ObservationIn,
  type PartWrites,
  type PromptIn,
  type RowBase,
  type SessionRef,
  type SummaryIn,
} from './queries/transfer';
import {
  authorship,
  chooseFoundProject,
  importedProjectKey,
  importedSessionKey,
  importSessionKey,
  mayImportIntoSession,
  mayWriteProject,
  writeRefusal,
  projectLookupKeys,
} from '../db/write-policy';
import { AppError } from '../lib/errors';
import { isHistory, planHistory } from './history';
import type { HistoryIn } from './queries/history';
import type { ExportRecord } from './records';

/** Who imports: a member writing their own rows, or the operator restoring a whole team as it was. */
export type Importer = { kind: 'member'; caller: Caller } | { kind: 'restore' };

/** A record with the line it came from (1-based), for errors that name it. */
export interface Numbered {
  line: number;
  record: ExportRecord;
}

export interface ImportCounts {
  users: number;
  projects: number;
  sessions: number;
  prompts: number;
  observations: number;
  summaries: number;
}

export const noCounts = (): ImportCounts => ({
  users: 0,
  projects: 0,
  sessions: 0,
  prompts: 0,
  observations: 0,
  summaries: 0,
});

type Of<K extends ExportRecord['kind']> = Extract<ExportRecord, { kind: K }>;
type RowRecord = Of<'prompt' | 'observation' | 'summary'>;
type ProjectTarget = NewSession['project'];

const lineError = (status: 400 | 403 | 409, code: string, line: number, what: string) =>
  new AppError(status, code, `Line ${line}: ${what}`);

/** Plans a part: what to write and what it adds. Reads only, except the members a restore adds first. */
/** `auditTarget`: the target of the part's audit row (an import job names its piece there, to find it again). */
export async function planPart(
  h: TeamDbs,
  who: Importer,
  part: Numbered[],
  now: number,
  auditTarget: string | null = null,
): Promise<{ writes: PartWrites; history: HistoryIn[]; counts: ImportCounts }> {
  const counts = noCounts();
  const of = <K extends ExportRecord['kind']>(kind: K) =>
    part.filter((n): n is { line: number; record: Of<K> } => n.record.kind === kind);
  const members = who.kind === 'restore' ? await restoreMembers(h, part, counts) : null;
  const projects = await planProjects(h, who, of('project'), of('session'), members, now);
  counts.projects = projects.creates.length;
  const rows = of('prompt').concat(of('observation') as never[], of('summary') as never[]) as {
    line: number;
    record: RowRecord;
  }[];
  const sessions = await planSessions(h, who, of('session'), rows, projects.targets, members, now);
  counts.sessions = sessions.creates.length;
  const writes: PartWrites = {
    teamId: h.teamId,
    projects: projects.creates,
    sessions: sessions.creates,
    prompts: [],
    observations: [],
    summaries: [],
    audit: null,
    storedAt: now,
  };
  await planRows(h, who, rows, sessions.targets, members, writes);
  counts.prompts = writes.prompts.length;
  counts.observations = writes.observations.length;
  counts.summaries = writes.summaries.length;
  const known = new Map([...sessions.targets].map(([k, t]) => [k, t.ref]));
  const history = await planHistory(
    h,
    who.kind === 'member' ? who.caller : null,
    part.flatMap((n) => (isHistory(n.record) ? [n.record] : [])),
    known,
    members,
    projects.targets,
  );
  if (who.kind === 'member') {
    writes.audit = {
      teamId: h.teamId,
      actorUserId: who.caller.userId,
      action: 'transfer.import',
      target: auditTarget,
      detail: { records: part.length, imported: counts },
      at: now,
    };
  }
  return { writes, history, counts };
}

/** A restore makes the members its lines name that the team lacks (on the directory, copied to the shard). */
async function restoreMembers(h: TeamDbs, part: Numbered[], counts: ImportCounts): Promise<Map<string, number>> {
  const wanted = new Map<string, { role: 'owner' | 'admin' | 'member' | 'reader'; createdAt: number }>();
  const want = (handle: string | null, at: number, role: 'owner' | 'admin' | 'member' | 'reader' = 'member') => {
    if (handle !== null && !wanted.has(handle)) wanted.set(handle, { role, createdAt: at });
  };
  for (const { record: r } of part) if (r.kind === 'user') want(r.handle, r.created_at, r.role);
  for (const { record: r } of part) {
    if (r.kind === 'project') want(r.owner, r.created_at);
    else if (r.kind === 'session') want(r.user, r.started_at);
    else if (r.kind === 'prompt' || r.kind === 'observation' || r.kind === 'summary') want(r.author, r.created_at);
  }
  counts.users = await addMissingMembers(h.dir, h.teamId, wanted);
  if (counts.users > 0) await syncTeamCopy(h);
  return memberIds(h.team, h.teamId);
}

const memberId = (members: Map<string, number>, handle: string): number => {
  const id = members.get(handle);
  if (id === undefined) throw new Error(`restored member ${handle} vanished`);
  return id;
};

/** Each project key the part names (project lines, then sessions' projects) → where its rows go, and what to make. */
async function planProjects(
  h: TeamDbs,
  who: Importer,
  lines: { line: number; record: Of<'project'> }[],
  sessionLines: { line: number; record: Of<'session'> }[],
  members: Map<string, number> | null,
  now: number,
): Promise<{ targets: Map<string, ProjectTarget>; creates: NewProject[] }> {
  const named = new Map<
    string,
    { line: number; visibility: 'team' | 'private'; owner: string | null; createdAt: number }
  >();
  for (const { line, record: r } of lines)
    if (!named.has(r.key))
      named.set(r.key, { line, visibility: r.visibility, owner: r.owner, createdAt: r.created_at });
  for (const { line, record: r } of sessionLines)
    if (!named.has(r.project)) named.set(r.project, { line, visibility: 'team', owner: null, createdAt: now });

  const caller = who.kind === 'member' ? who.caller : null;
  const stored = new Map([...named.keys()].map((raw) => [raw, caller ? importedProjectKey(raw, caller.handle) : raw]));
  const lookup = [
    ...new Set([...stored.values()].flatMap((k) => (caller ? projectLookupKeys(k, caller.handle) : [k]))),
  ];
  const found = await projectsByKeys(h.team, h.teamId, lookup);
  const targets = new Map<string, ProjectTarget>();
  const creates = new Map<string, NewProject>();
  let writers: Readonly<Record<string, readonly string[]>> | undefined;
  for (const [raw, n] of named) {
    const key = stored.get(raw)!;
    if (!caller) {
      const row = found.byKey.get(key);
      if (row) targets.set(raw, { id: row.id });
      else {
        targets.set(raw, { key, writer: null });
        if (!creates.has(key))
          creates.set(key, {
            key,
            visibility: n.visibility,
            ownerUserId: n.owner === null ? null : memberId(members!, n.owner),
            createdAt: n.createdAt,
          });
      }
      continue;
    }
    const choice = chooseFoundProject(caller, key, found, n.visibility);
    if (choice.kind === 'unavailable')
      throw lineError(
        409,
        'project_key_unavailable',
        n.line,
        `the project key "${raw}" cannot be used; rename the project in the file.`,
      );
    // The write policy's project_writers (issue 38): an import puts records only where the importer may. The list
    // is read once a part, and only when a team project is named (an importer is an admin, never a reader).
    const into =
      choice.kind === 'use'
        ? choice.project
        : { key: choice.key, visibility: choice.visibility, ownerUserId: caller.userId };
    if (into.visibility === 'team' || into.ownerUserId !== caller.userId) {
      writers ??= caller.settings?.project_writers ?? (await getTeamSettings(h.dir, h.teamId)).project_writers ?? {};
      const refused = writeRefusal(caller, into, writers);
      if (refused)
        throw lineError(
          403,
          refused === 'reader' ? 'reader_role' : 'not_a_project_writer',
          n.line,
          `records in "${into.key}" come only from the members its admins listed (project_writers).`,
        );
    }
    if (choice.kind === 'use') targets.set(raw, { id: choice.project.id });
    else {
      targets.set(raw, { key: choice.key, writer: caller.userId });
      if (!creates.has(choice.key))
        creates.set(choice.key, {
          key: choice.key,
          visibility: choice.visibility,
          ownerUserId: caller.userId,
          createdAt: n.createdAt,
        });
    }
  }
  return { targets, creates: [...creates.values()] };
}

/** Each session key the part names → the session its rows go into (existing, or made by this part). */
async function planSessions(
  h: TeamDbs,
  who: Importer,
  lines: { line: number; record: Of<'session'> }[],
  rows: { line: number; record: RowRecord }[],
  projects: Map<string, ProjectTarget>,
  members: Map<string, number> | null,
  now: number,
): Promise<{ targets: Map<string, { ref: SessionRef; existing: number | null }>; creates: NewSession[] }> {
  const declared = new Map<string, { line: number; record: Of<'session'> }>();
  for (const l of lines) if (!declared.has(l.record.session_key)) declared.set(l.record.session_key, l);
  const firstUse = new Map<string, number>();
  for (const { line, record: r } of rows) if (!firstUse.has(r.session_key)) firstUse.set(r.session_key, line);
  const keys = [...new Set([...declared.keys(), ...firstUse.keys()])];

  const caller = who.kind === 'member' ? who.caller : null;
  const found = await sessionsByKeys(
    h.team,
    h.teamId,
    caller ? keys.flatMap((k) => [k, importedSessionKey(caller.userId, k)]) : keys,
  );
  const targets = new Map<string, { ref: SessionRef; existing: number | null }>();
  const creates: NewSession[] = [];
  for (const key of keys) {
    const stored = caller ? importSessionKey(caller, key, found.get(key) ?? null) : key;
    const existing: KeyedSession | undefined = found.get(stored);
    const line = declared.get(key)?.line ?? firstUse.get(key)!;
    if (existing) {
      // Only the importer's own imported session in a project they may write (the policy decided the key so).
      if (caller && !(mayImportIntoSession(caller, existing) && mayWriteProject(caller, existing))) {
        throw lineError(
          409,
          'session_conflict',
          line,
          `the session "${key}" cannot be imported into; change its key in the file.`,
        );
      }
      targets.set(key, { ref: { id: existing.id }, existing: existing.id });
      continue;
    }
    const decl = declared.get(key);
    // The same answer whether the key is free or someone else's: neither is a session of this import.
    if (!decl)
      throw lineError(
        400,
        'unknown_session',
        line,
        `session "${key}" is neither in this part before its rows nor imported earlier.`,
      );
    const r = decl.record;
    creates.push({
      sessionKey: stored,
      project: projects.get(r.project)!,
      platform: r.platform,
      promptCount: r.prompt_count,
      startedAt: r.started_at,
      endedAt: r.ended_at,
      deviceId: null,
      gitBranch: r.git_branch ?? null,
      gitCommit: r.git_commit ?? null,
      // A restore keeps a session an import made marked so (live events stay refused for it, the policy reads it).
      ...(caller
        ? { userId: caller.userId, importedAt: now, importedAuthor: authorship(caller, r.user).importedAuthor }
        : {
            userId: memberId(members!, r.user),
            importedAt: r.imported_at ?? null,
            importedAuthor: r.imported_author ?? null,
            retireAfter: r.retire_after ?? null,
          }),
    });
    targets.set(key, { ref: { key: stored, userId: caller ? caller.userId : null }, existing: null });
  }
  return { targets, creates };
}

/** Prompts, observations and summaries: by whom, into which session; rows already there (or repeated) are left out. */
async function planRows(
  h: TeamDbs,
  who: Importer,
  rows: { line: number; record: RowRecord }[],
  sessions: Map<string, { ref: SessionRef; existing: number | null }>,
  members: Map<string, number> | null,
  out: PartWrites,
): Promise<void> {
  const existingIds = [...new Set([...sessions.values()].flatMap((s) => (s.existing === null ? [] : [s.existing])))];
  const hashes = rows.flatMap(({ record: r }) => (r.kind === 'prompt' ? [] : [r.content_hash]));
  const numbers = rows.flatMap(({ record: r }) => (r.kind === 'prompt' ? [r.prompt_number] : []));
  const held = await heldRows(h.team, existingIds, [...new Set(hashes)], [...new Set(numbers)]);
  const seen = new Set<string>();
  for (const { record: r } of rows) {
    const s = sessions.get(r.session_key)!;
    const sessionName = s.existing ?? `new:${r.session_key}`;
    const rowKey = `${sessionName}:${r.kind === 'prompt' ? r.prompt_number : r.content_hash}`;
    const kind = r.kind === 'prompt' ? 'prompts' : r.kind === 'observation' ? 'observations' : 'summaries';
    if (seen.has(`${kind}:${rowKey}`) || held[kind].has(rowKey)) continue;
    seen.add(`${kind}:${rowKey}`);
    // A restore puts the row back as it was; an admin's import owns its rows, and a held row stays held.
    const by =
      who.kind === 'member'
        ? { ...authorship(who.caller, r.author), releasedAt: null, releasedBy: null }
        : {
            authorUserId: memberId(members!, r.author),
            importedAuthor: r.imported_author ?? null,
            releasedAt: r.released_at ?? null,
            releasedBy: r.released_by == null ? null : (members!.get(r.released_by) ?? null),
          };
    const base: RowBase = {
      session: s.ref,
      promptNumber: r.prompt_number,
      promptId: r.prompt_id,
      createdAt: r.created_at,
      ...by,
    };
    if (r.kind === 'prompt') out.prompts.push({ ...base, text: r.text } satisfies PromptIn);
    else if (r.kind === 'observation') {
      out.observations.push({
        ...base,
        type: r.type,
        title: r.title,
        subtitle: r.subtitle,
        facts: r.facts,
        narrative: r.narrative,
        concepts: r.concepts,
        filesRead: r.files_read,
        filesModified: r.files_modified,
        discoveryTokens: r.discovery_tokens,
        contentHash: r.content_hash,
        agentId: r.agent_id,
        agentType: r.agent_type,
        source: r.source,
        gitBranch: r.git_branch ?? null,
        gitCommit: r.git_commit ?? null,
        ...(r.file_ids ? { fileIds: new Map(Object.entries(r.file_ids)) } : {}),
      } satisfies ObservationIn);
    } else {
      out.summaries.push({
        ...base,
        request: r.request,
        investigated: r.investigated,
        learned: r.learned,
        completed: r.completed,
        nextSteps: r.next_steps,
        notes: r.notes,
        contentHash: r.content_hash,
      } satisfies SummaryIn);
    }
  }
}
