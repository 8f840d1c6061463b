// POST /api/admin/import: an NDJSON export (or part of one) into the caller's team. Every line is checked
// before anything is written; rows are matched by handle, project key, session key and content hash, so
// importing the same file twice adds nothing. Imported users are members without tokens.
import { findSession } from '../db/forget';
import { insertObservation, insertPrompt, insertSummary, projectByKey, sessionByKey, userByHandle } from '../db/transfer';
import { AppError } from '../lib/errors';
import { ExportRecord } from './records';
import { syncTeamCopy, type TeamDbs } from '../db/shards';

export const MAX_IMPORT_BYTES = 1_000_000;
export const MAX_IMPORT_LINES = 2_000;

export interface ImportCounts {
  users: number;
  projects: number;
  sessions: number;
  prompts: number;
  observations: number;
  summaries: number;
}

/** Parses and checks every line (linear in the body, which is bounded); 400 names the first bad line. */
export function parseNdjson(body: string): ExportRecord[] {
  const lines = body.split('\n');
  if (lines.length > MAX_IMPORT_LINES + 1) throw new AppError(413, 'too_many_records', `At most ${MAX_IMPORT_LINES} records a request; send the file in parts.`);
  const out: ExportRecord[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw new AppError(400, 'malformed_json', `Line ${i + 1} is not valid JSON.`);
    }
    const r = ExportRecord.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new AppError(400, 'invalid_record', `Line ${i + 1}: ${issue ? `${issue.path.join('.') || 'record'}: ${issue.message}` : 'not a record'}.`);
    }
    out.push(r.data);
  }
  return out;
}

/**
 * Writes `records` into the team of `h`: members on the directory (a new one copied to the team's shard at
 * once, as memory rows reference it), everything else on the team's database.
 */
export async function importRecords(h: TeamDbs, records: ExportRecord[], now: number): Promise<{ counts: ImportCounts; observationIds: number[] }> {
  const db = h.team;
  const t = h.teamId;
  const counts: ImportCounts = { users: 0, projects: 0, sessions: 0, prompts: 0, observations: 0, summaries: 0 };
  const observationIds: number[] = [];
  const userIds = new Map<string, number>();
  const projectIds = new Map<string, number>();
  const sessionRefs = new Map<string, { id: number; projectId: number }>();

  const user = async (handle: string, at: number) => {
    let id = userIds.get(handle);
    if (id === undefined) {
      const u = await userByHandle(h.dir, t, handle, at);
      if (u.created) {
        counts.users++;
        await syncTeamCopy(h);
      }
      userIds.set(handle, (id = u.id));
    }
    return id;
  };
  const project = async (key: string) => {
    const id = projectIds.get(key);
    if (id !== undefined) return id;
    // A project line comes before its sessions in an export; a part of a file may rely on an earlier part.
    const made = await projectByKey(db, t, { key, visibility: 'team', ownerUserId: null, createdAt: now });
    if (made.created) counts.projects++;
    projectIds.set(key, made.id);
    return made.id;
  };
  const session = async (key: string) => {
    let ref = sessionRefs.get(key);
    if (!ref) {
      const found = await findSession(db, t, key);
      if (!found) throw new AppError(400, 'unknown_session', `Session "${key}" is neither in this file before its rows nor in the team.`);
      sessionRefs.set(key, (ref = { id: found.id, projectId: found.projectId }));
    }
    return ref;
  };

  for (const r of records) {
    switch (r.kind) {
      case 'user':
        await user(r.handle, r.created_at);
        break;
      case 'project': {
        const owner = r.owner === null ? null : await user(r.owner, r.created_at);
        const p = await projectByKey(db, t, { key: r.key, visibility: r.visibility, ownerUserId: owner, createdAt: r.created_at });
        if (p.created) counts.projects++;
        projectIds.set(r.key, p.id);
        break;
      }
      case 'session': {
        const projectId = await project(r.project);
        const made = await sessionByKey(db, {
          teamId: t, sessionKey: r.session_key, projectId, userId: await user(r.user, r.started_at), platform: r.platform,
          promptCount: r.prompt_count, startedAt: r.started_at, endedAt: r.ended_at,
        });
        if (made.created) counts.sessions++;
        // An existing session keeps its project: its rows go where it already is.
        sessionRefs.set(r.session_key, { id: made.id, projectId: made.projectId });
        break;
      }
      default: {
        const s = await session(r.session_key);
        const scope = { teamId: t, projectId: s.projectId, sessionId: s.id, authorUserId: await user(r.author, r.created_at) };
        if (r.kind === 'prompt') {
          if (await insertPrompt(db, scope, { promptNumber: r.prompt_number, promptId: r.prompt_id, text: r.text, createdAt: r.created_at })) counts.prompts++;
        } else if (r.kind === 'observation') {
          const id = await insertObservation(db, scope, {
            promptNumber: r.prompt_number, promptId: r.prompt_id, type: r.type, title: r.title, subtitle: r.subtitle, facts: r.facts,
            narrative: r.narrative, concepts: r.concepts, filesRead: r.files_read, filesModified: r.files_modified, createdAt: r.created_at,
            discoveryTokens: r.discovery_tokens, contentHash: r.content_hash, agentId: r.agent_id, agentType: r.agent_type, source: r.source,
          }, now);
          if (id !== null) {
            counts.observations++;
            observationIds.push(id);
          }
        } else if (
          await insertSummary(db, scope, {
            promptNumber: r.prompt_number, promptId: r.prompt_id, request: r.request, investigated: r.investigated, learned: r.learned,
            completed: r.completed, nextSteps: r.next_steps, notes: r.notes, createdAt: r.created_at, contentHash: r.content_hash,
          })
        ) counts.summaries++;
      }
    }
  }
  return { counts, observationIds };
}
