// POST /api/admin/import: an NDJSON export (or part of one) into the caller's team. Every line is checked
// before anything is written; rows are matched by handle, project key, session key and content hash, so
// importing the same file twice adds nothing. Imported users are members without tokens.
import { findSession } from '../db/forget';
import { insertObservation, insertPrompt, insertSummary, projectByKey, sessionByKey, userByHandle } from '../db/transfer';
import { AppError } from '../lib/errors';
import { ExportRecord } from './records';
import { syncTeamCopy, type TeamDbs } from '../db/shards';
import type { RecordIds } from '../vectors/index-records';

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
export async function importRecords(h: TeamDbs, records: ExportRecord[], now: number): Promise<{ counts: ImportCounts; ids: Required<RecordIds> }> {
  const run = new ImportRun(h, now);
  for (const r of records) await run.add(r);
  return { counts: run.counts, ids: run.ids };
}

type RowRecord = Extract<ExportRecord, { kind: 'prompt' | 'observation' | 'summary' }>;

/** One import request: what it wrote so far, and the users, projects and sessions it already matched. */
class ImportRun {
  readonly counts: ImportCounts = { users: 0, projects: 0, sessions: 0, prompts: 0, observations: 0, summaries: 0 };
  /** The rows written, to be embedded. */
  readonly ids: Required<RecordIds> = { observations: [], summaries: [], prompts: [] };
  readonly #userIds = new Map<string, number>();
  readonly #projectIds = new Map<string, number>();
  readonly #sessions = new Map<string, { id: number; projectId: number }>();

  private readonly db: D1Database;
  private readonly teamId: number;

  constructor(
    private readonly h: TeamDbs,
    private readonly now: number,
  ) {
    this.db = h.team;
    this.teamId = h.teamId;
  }

  async add(r: ExportRecord): Promise<void> {
    switch (r.kind) {
      case 'user':
        await this.#user(r.handle, r.created_at);
        return;
      case 'project': {
        const owner = r.owner === null ? null : await this.#user(r.owner, r.created_at);
        const p = await projectByKey(this.db, this.teamId, { key: r.key, visibility: r.visibility, ownerUserId: owner, createdAt: r.created_at });
        if (p.created) this.counts.projects++;
        this.#projectIds.set(r.key, p.id);
        return;
      }
      case 'session': {
        const projectId = await this.#project(r.project);
        const made = await sessionByKey(this.db, {
          teamId: this.teamId, sessionKey: r.session_key, projectId, userId: await this.#user(r.user, r.started_at), platform: r.platform,
          promptCount: r.prompt_count, startedAt: r.started_at, endedAt: r.ended_at,
        });
        if (made.created) this.counts.sessions++;
        // An existing session keeps its project: its rows go where it already is.
        this.#sessions.set(r.session_key, { id: made.id, projectId: made.projectId });
        return;
      }
      default:
        return this.#row(r);
    }
  }

  /** A prompt, observation or summary, filed under its session's project. */
  async #row(r: RowRecord): Promise<void> {
    const s = await this.#session(r.session_key);
    const scope = { teamId: this.teamId, projectId: s.projectId, sessionId: s.id, authorUserId: await this.#user(r.author, r.created_at) };
    const base = { promptNumber: r.prompt_number, promptId: r.prompt_id, createdAt: r.created_at };
    if (r.kind === 'prompt') {
      const id = await insertPrompt(this.db, scope, { ...base, text: r.text });
      if (id !== null) {
        this.counts.prompts++;
        this.ids.prompts.push(id);
      }
    } else if (r.kind === 'observation') {
      const id = await insertObservation(this.db, scope, {
        ...base, type: r.type, title: r.title, subtitle: r.subtitle, facts: r.facts, narrative: r.narrative, concepts: r.concepts,
        filesRead: r.files_read, filesModified: r.files_modified, discoveryTokens: r.discovery_tokens, contentHash: r.content_hash,
        agentId: r.agent_id, agentType: r.agent_type, source: r.source,
      }, this.now);
      if (id !== null) {
        this.counts.observations++;
        this.ids.observations.push(id);
      }
    } else {
      const made = await insertSummary(this.db, scope, {
        ...base, request: r.request, investigated: r.investigated, learned: r.learned, completed: r.completed, nextSteps: r.next_steps,
        notes: r.notes, contentHash: r.content_hash,
      });
      if (made !== null) {
        this.counts.summaries++;
        this.ids.summaries.push(made);
      }
    }
  }

  async #user(handle: string, at: number): Promise<number> {
    const known = this.#userIds.get(handle);
    if (known !== undefined) return known;
    const u = await userByHandle(this.h.dir, this.teamId, handle, at);
    if (u.created) {
      this.counts.users++;
      await syncTeamCopy(this.h);
    }
    this.#userIds.set(handle, u.id);
    return u.id;
  }

  async #project(key: string): Promise<number> {
    const known = this.#projectIds.get(key);
    if (known !== undefined) return known;
    // A project line comes before its sessions in an export; a part of a file may rely on an earlier part.
    const made = await projectByKey(this.db, this.teamId, { key, visibility: 'team', ownerUserId: null, createdAt: this.now });
    if (made.created) this.counts.projects++;
    this.#projectIds.set(key, made.id);
    return made.id;
  }

  async #session(key: string): Promise<{ id: number; projectId: number }> {
    const known = this.#sessions.get(key);
    if (known) return known;
    const found = await findSession(this.db, this.teamId, key);
    if (!found) throw new AppError(400, 'unknown_session', `Session "${key}" is neither in this file before its rows nor in the team.`);
    const ref = { id: found.id, projectId: found.projectId };
    this.#sessions.set(key, ref);
    return ref;
  }
}
