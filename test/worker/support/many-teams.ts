// Many teams at once, cheaply: `count` teams named `<tag>-<i>` on DB, each with an owner, a project, a session and
// (`active`) one observation stored now, so the daily consolidation finds the project active, in seven INSERT … SELECT
// statements whatever the count (bootstrapping 1,000 teams through the API would take minutes). Every
// `retentionEvery`-th team sets retention_days 30. Rows go straight into D1, as a restore would leave them; no token
// is made.
import { env } from 'cloudflare:workers';

export interface ManyTeams {
  /** The teams' ids, ascending. */
  ids: number[];
  /** How many set retention_days. */
  withRetention: number;
}

export async function seedManyTeams(tag: string, count: number, retentionEvery = 4, active = true): Promise<ManyTeams> {
  const d = env.DB;
  const now = Date.now();
  const each = (sql: string) => `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1) ${sql}`;
  const team = "t.slug = ?2 || '-' || k.i";
  await d.batch([
    d
      .prepare(
        each(`INSERT INTO teams (slug, name, settings, created_at)
              SELECT ?2 || '-' || i, ?2 || '-' || i,
                     CASE WHEN ?4 > 0 AND i % ?4 = 0 THEN '{"retention_days":30}' ELSE '{}' END, ?3 FROM k`),
      )
      .bind(count, tag, now, retentionEvery),
    d
      .prepare(
        each(`INSERT INTO users (team_id, handle, role, created_at)
              SELECT t.id, 'owner', 'owner', ?3 FROM k JOIN teams t ON ${team}`),
      )
      .bind(count, tag, now),
    d
      .prepare(
        each(`INSERT INTO devices (team_id, user_id, name, created_at)
              SELECT t.id, u.id, 'laptop', ?3 FROM k JOIN teams t ON ${team} JOIN users u ON u.team_id = t.id`),
      )
      .bind(count, tag, now),
    d
      .prepare(
        each(`INSERT INTO projects (team_id, key, owner_user_id, visibility, created_at)
              SELECT t.id, 'github.com/' || ?2 || '/repo', u.id, 'team', ?3 FROM k JOIN teams t ON ${team}
              JOIN users u ON u.team_id = t.id`),
      )
      .bind(count, tag, now),
    d
      .prepare(
        each(`INSERT INTO sessions (team_id, session_key, project_id, user_id, device_id, started_at, prompt_count)
              SELECT t.id, ?2 || '-s', p.id, u.id, v.id, ?3, 1 FROM k JOIN teams t ON ${team}
              JOIN users u ON u.team_id = t.id JOIN projects p ON p.team_id = t.id JOIN devices v ON v.team_id = t.id`),
      )
      .bind(count, tag, now),
    d
      .prepare(
        each(`INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at,
                content_hash, author_user_id)
              SELECT t.id, p.id, s.id, 'discovery', 'note of ' || t.slug, 'seeded', ?3, ?3, ?2 || '-' || k.i, u.id
              FROM k JOIN teams t ON ${team} JOIN users u ON u.team_id = t.id JOIN projects p ON p.team_id = t.id
              JOIN sessions s ON s.team_id = t.id WHERE ?4`),
      )
      .bind(count, tag, now, active ? 1 : 0),
  ]);
  const rows = await d
    .prepare("SELECT id FROM teams WHERE slug LIKE ?1 || '-%' ORDER BY id")
    .bind(tag)
    .all<{ id: number }>();
  const ids = rows.results.map((r) => r.id);
  if (ids.length !== count) throw new Error(`seeded ${ids.length} teams, wanted ${count}`);
  return { ids, withRetention: retentionEvery > 0 ? Math.floor(count / retentionEvery) : 0 };
}

/** `count` more projects of the team (seeded by seedManyTeams), each with an observation stored now: all active today. */
export async function seedActiveProjects(teamId: number, count: number): Promise<void> {
  const d = env.DB;
  const now = Date.now();
  const each = (sql: string) => `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1) ${sql}`;
  await d.batch([
    d
      .prepare(
        each(`INSERT INTO projects (team_id, key, owner_user_id, visibility, created_at)
              SELECT ?2, 'github.com/active/repo-' || i, u.id, 'team', ?3 FROM k JOIN users u ON u.team_id = ?2`),
      )
      .bind(count, teamId, now),
    d
      .prepare(
        `INSERT INTO sessions (team_id, session_key, project_id, user_id, started_at, prompt_count)
         SELECT ?1, 'active-' || p.id, p.id, p.owner_user_id, ?2, 1 FROM projects p
         WHERE p.team_id = ?1 AND p.key LIKE 'github.com/active/%'`,
      )
      .bind(teamId, now),
    d
      .prepare(
        `INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at,
           content_hash, author_user_id)
         SELECT ?1, s.project_id, s.id, 'discovery', 'active note', 'seeded', ?2, ?2, s.session_key, s.user_id
         FROM sessions s WHERE s.team_id = ?1 AND s.session_key LIKE 'active-%'`,
      )
      .bind(teamId, now),
  ]);
}
