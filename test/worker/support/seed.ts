// Seeds D1 directly with projects, sessions, observations and summaries for recall tests.
import { env } from 'cloudflare:workers';
import { cjkTerms } from '../../../src/lib/cjk';
import { sha256Hex } from '../../../src/lib/crypto';
import { fresh, newIdentity, type TestIdentity } from './http';

export interface Ids {
  teamId: number;
  userId: number;
  deviceId: number | null;
}

/** Team, user and device ids behind a test identity. */
export async function idsOf(id: TestIdentity): Promise<Ids> {
  const row = await env.DB.prepare(
    `SELECT t.id AS team_id, u.id AS user_id, d.id AS device_id FROM teams t JOIN users u ON u.team_id = t.id
       LEFT JOIN devices d ON d.user_id = u.id AND d.name = ?3 WHERE t.slug = ?1 AND u.handle = ?2`,
  )
    .bind(id.team, id.user, id.device)
    .first<{ team_id: number; user_id: number; device_id: number | null }>();
  if (!row) throw new Error('identity not found');
  return { teamId: row.team_id, userId: row.user_id, deviceId: row.device_id };
}

export async function seedProject(ids: Ids, key: string, visibility: 'team' | 'private' = 'team'): Promise<number> {
  const row = await env.DB.prepare(
    `INSERT INTO projects (team_id, key, owner_user_id, visibility, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(team_id, key) DO UPDATE SET visibility = excluded.visibility RETURNING id`,
  )
    .bind(ids.teamId, key, ids.userId, visibility, Date.now())
    .first<{ id: number }>();
  return row!.id;
}

export async function seedSession(
  ids: Ids,
  projectId: number,
  sessionKey: string,
  startedAt = Date.now(),
): Promise<number> {
  const row = await env.DB.prepare(
    `INSERT INTO sessions (team_id, session_key, project_id, user_id, device_id, started_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
  )
    .bind(ids.teamId, sessionKey, projectId, ids.userId, ids.deviceId, startedAt)
    .first<{ id: number }>();
  return row!.id;
}

export interface SeedObservation {
  type?: string;
  title?: string | null;
  subtitle?: string | null;
  narrative?: string | null;
  facts?: string[];
  concepts?: string[];
  filesRead?: string[];
  filesModified?: string[];
  createdAt?: number;
  promptNumber?: number;
  discoveryTokens?: number;
  authorUserId?: number;
  deviceId?: number | null;
  /** Set to store the row as one an admin released from the hold-back (the upgrade's judge-held job leaves it be). */
  releasedAt?: number;
}

export async function seedObservation(
  ids: Ids,
  projectId: number,
  sessionId: number,
  o: SeedObservation,
): Promise<number> {
  const title = o.title ?? 'Untitled';
  const narrative = o.narrative ?? null;
  const facts = o.facts ?? [];
  const hash = (await sha256Hex(`${sessionId}\u0000${title}\u0000${narrative ?? ''}\u0000${Math.random()}`)).slice(
    0,
    16,
  );
  const createdAt = o.createdAt ?? Date.now();
  // released_at is named only when given: the upgrade tests seed databases from before its migration, which lack it.
  const released = o.releasedAt === undefined ? [] : [o.releasedAt];
  const row = await env.DB.prepare(
    `INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, subtitle, facts, narrative, concepts,
        files_read, files_modified, cjk_terms, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id
        ${released.length ? ', released_at' : ''})
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${released.length ? ', ?' : ''}) RETURNING id`,
  )
    .bind(
      ids.teamId,
      projectId,
      sessionId,
      o.promptNumber ?? 1,
      o.type ?? 'discovery',
      title,
      o.subtitle ?? null,
      JSON.stringify(facts),
      narrative,
      JSON.stringify(o.concepts ?? ['how-it-works']),
      JSON.stringify(o.filesRead ?? []),
      JSON.stringify(o.filesModified ?? []),
      cjkTerms(title, o.subtitle, narrative, ...facts),
      createdAt,
      createdAt,
      o.discoveryTokens ?? 0,
      hash,
      o.authorUserId ?? ids.userId,
      o.deviceId ?? ids.deviceId,
      ...released,
    )
    .first<{ id: number }>();
  const id = row!.id;
  const files = [
    ...(o.filesRead ?? []).map((p) => [p, 'read']),
    ...(o.filesModified ?? []).map((p) => [p, 'modified']),
  ];
  for (const [path, kind] of files) {
    await env.DB.prepare(
      'INSERT OR IGNORE INTO observation_files (observation_id, team_id, project_id, path, kind) VALUES (?, ?, ?, ?, ?)',
    )
      .bind(id, ids.teamId, projectId, path, kind)
      .run();
  }
  return id;
}

export interface SeedSummary {
  request?: string;
  investigated?: string;
  learned?: string;
  completed?: string;
  nextSteps?: string;
  notes?: string | null;
  createdAt?: number;
  /** As SeedObservation's. */
  releasedAt?: number;
}

export async function seedSummary(ids: Ids, projectId: number, sessionId: number, s: SeedSummary): Promise<number> {
  const createdAt = s.createdAt ?? Date.now();
  // As seedObservation's: released_at only when given, for the upgrade tests' older schemas.
  const released = s.releasedAt === undefined ? [] : [s.releasedAt];
  const row = await env.DB.prepare(
    `INSERT INTO summaries (team_id, project_id, session_id, request, investigated, learned, completed, next_steps, notes, cjk_terms,
        created_at, content_hash, author_user_id, device_id${released.length ? ', released_at' : ''})
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${released.length ? ', ?' : ''}) RETURNING id`,
  )
    .bind(
      ids.teamId,
      projectId,
      sessionId,
      s.request ?? '',
      s.investigated ?? '',
      s.learned ?? '',
      s.completed ?? '',
      s.nextSteps ?? '',
      s.notes ?? null,
      cjkTerms(s.request, s.investigated, s.learned, s.completed, s.nextSteps),
      createdAt,
      `${sessionId}-${createdAt}-${Math.random()}`,
      ids.userId,
      ids.deviceId,
      ...released,
    )
    .first<{ id: number }>();
  return row!.id;
}

/** A fresh identity (or the one given) with one project and one session, and shorthands to seed into them. */
export interface SeedWorld {
  id: TestIdentity;
  ids: Ids;
  key: string;
  projectId: number;
  sessionId: number;
  add(o: SeedObservation): Promise<number>;
  summary(s: SeedSummary): Promise<number>;
}

export async function seedWorld(
  opts: { identity?: TestIdentity; visibility?: 'team' | 'private' } = {},
): Promise<SeedWorld> {
  const id = opts.identity ?? (await newIdentity());
  const ids = await idsOf(id);
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, key, opts.visibility ?? 'team');
  const sessionId = await seedSession(ids, projectId, fresh('s'));
  return {
    id,
    ids,
    key,
    projectId,
    sessionId,
    add: (o) => seedObservation(ids, projectId, sessionId, o),
    summary: (s) => seedSummary(ids, projectId, sessionId, s),
  };
}
