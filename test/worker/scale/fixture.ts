// The scale fixture: one team of PROJECTS projects × PER_PROJECT observations (100k over 200 by default), with
// sessions, summaries, prompts and a file row per observation, written by bounded INSERT … SELECT statements
// (a few per project), not through the observer. Observations are spread ten minutes apart over ~2 years, so a
// retention sweep of a year deletes about half. Every row of project p carries a word of its own (random letters,
// then p and 7: the stemmer keeps a word ending in a digit as written), so a scan of the FTS segment blobs for its
// tail (segments store a term's tail after the prefix it shares with the term before) tells whether it is gone.
import { env } from 'cloudflare:workers';
import type { Ids } from '../support/seed';

export const SESSIONS = 5;
export const T0 = Date.parse('2024-01-01T00:00:00Z');
export const STEP_MS = 600_000;

const letters = () =>
  Array.from({ length: 8 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
/** The part of a project's word a segment scan looks for. */
export const wordTail = (word: string) => word.slice(-7);

export interface Fixture {
  projectIds: number[];
  keys: string[];
  words: string[];
  /** Rows written per table. */
  rows: Record<string, number>;
  ms: number;
}

export async function seedScale(ids: Ids, tag: string, projects: number, perProject: number): Promise<Fixture> {
  const started = Date.now();
  const projectIds: number[] = [];
  const keys: string[] = [];
  const words: string[] = [];
  const d = env.DB;
  for (let p = 0; p < projects; p++) {
    const key = `github.com/${tag}/repo-${p}`;
    const base = T0 + p * perProject * STEP_MS;
    const pid = (await d
      .prepare(
        'INSERT INTO projects (team_id, key, owner_user_id, visibility, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id',
      )
      .bind(ids.teamId, key, ids.userId, 'team', base)
      .first<{ id: number }>())!.id;
    projectIds.push(pid);
    keys.push(key);
    await d
      .prepare(
        `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?1 - 1)
         INSERT INTO sessions (team_id, session_key, project_id, user_id, device_id, started_at, ended_at, prompt_count)
         SELECT ?2, ?3 || '-s' || i, ?4, ?5, ?6, ?7 + i * ?8, ?7 + (i + 1) * ?8 - 1, 1 FROM k`,
      )
      .bind(
        SESSIONS,
        ids.teamId,
        `${tag}-p${p}`,
        pid,
        ids.userId,
        ids.deviceId,
        base,
        (perProject / SESSIONS) * STEP_MS,
      )
      .run();
    const word = `${letters()}${p}7`;
    words.push(word);
    // Observation i of the project belongs to session floor(i * SESSIONS / perProject) (bound numbers are REALs to SQLite).
    await d
      .prepare(
        `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?1 - 1)
         INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, subtitle, narrative, facts, concepts,
            files_read, files_modified, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id)
         SELECT ?2, ?3, s.id, 1, CASE i % 4 WHEN 0 THEN 'bugfix' WHEN 1 THEN 'feature' WHEN 2 THEN 'decision' ELSE 'discovery' END,
            ?4 || ' change ' || i || ' in module ' || (i % 37), 'subsystem ' || (i % 11),
            'While working on ' || ?4 || ' item ' || i || ' the cache layer was found to reuse stale keys after a deploy; the fix ' ||
            'scopes keys by build id and adds a regression test covering the restart path and the locale fallback.',
            json_array('keys include the build id ' || i, 'restart path covered ' || (i % 13)), json_array('how-it-works'),
            json_array('src/module' || (i % 37) || '/cache.ts'), '[]', ?5 + i * ?6, ?5 + i * ?6, 120, ?4 || '-' || i, ?7, ?8
         FROM k JOIN sessions s ON s.team_id = ?2 AND s.session_key = ?9 || '-s' || CAST(i * ?10 / ?1 AS INTEGER)`,
      )
      .bind(perProject, ids.teamId, pid, word, base, STEP_MS, ids.userId, ids.deviceId, `${tag}-p${p}`, SESSIONS)
      .run();
    await d
      .prepare(
        `INSERT OR IGNORE INTO observation_files (observation_id, team_id, project_id, path, kind)
         SELECT id, team_id, project_id, json_extract(files_read, '$[0]'), 'read' FROM observations WHERE team_id = ? AND project_id = ?`,
      )
      .bind(ids.teamId, pid)
      .run();
    await d
      .prepare(
        `INSERT INTO summaries (team_id, project_id, session_id, request, investigated, learned, completed, next_steps, notes, created_at,
            content_hash, author_user_id, device_id)
         SELECT team_id, project_id, id, 'Fix the ' || ?3 || ' cache', 'cache keys', 'keys need the build id', 'fixed', 'watch deploys', NULL,
            ended_at, session_key || '-sum', user_id, device_id FROM sessions WHERE team_id = ?1 AND project_id = ?2`,
      )
      .bind(ids.teamId, pid, word)
      .run();
    await d
      .prepare(
        `INSERT INTO prompts (team_id, project_id, session_id, prompt_number, text, author_user_id, created_at)
         SELECT team_id, project_id, id, 1, 'please fix the ' || ?3 || ' cache after the deploy', user_id, started_at
         FROM sessions WHERE team_id = ?1 AND project_id = ?2`,
      )
      .bind(ids.teamId, pid, word)
      .run();
  }
  const rows: Record<string, number> = {};
  for (const t of ['observations', 'observation_files', 'sessions', 'summaries', 'prompts']) {
    rows[t] = (await d
      .prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE team_id = ?`)
      .bind(ids.teamId)
      .first<{ n: number }>())!.n;
  }
  return { projectIds, keys, words, rows, ms: Date.now() - started };
}

/** Rows of a project left in any table, and FTS segment blobs still holding its word (the forget promise's scan). */
export async function projectTraces(
  db: D1Database,
  teamId: number,
  projectId: number,
  word: string,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ['observations', 'observation_files', 'sessions', 'summaries', 'prompts', 'local_vectors']) {
    out[t] = (await db
      .prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE team_id = ? AND project_id = ?`)
      .bind(teamId, projectId)
      .first<{ n: number }>())!.n;
  }
  for (const t of ['observations_fts', 'summaries_fts', 'prompts_fts']) {
    out[`${t} segments`] = (await db
      .prepare(`SELECT COUNT(*) AS n FROM ${t}_data WHERE instr(CAST(block AS TEXT), ?) > 0`)
      .bind(wordTail(word))
      .first<{ n: number }>())!.n;
  }
  return out;
}
