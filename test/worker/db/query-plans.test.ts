// How SQLite runs the data layer's statements that name rows by id, read from D1's own EXPLAIN QUERY PLAN. Without
// table statistics SQLite guesses that `team_id = ?` matches a handful of rows, so a statement like
// `WHERE team_id = ? AND id IN (…)` walked every row of the team through its time index (16–28 ms instead of ≤ 1 ms
// at 100k rows; D1 counts each row walked as read, the last test shows). The plan does not depend on the data, so
// an empty team shows it. The statements are taken from the data layer's own functions through a recording database that runs
// nothing; each is then explained by the real one.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { feedItemsByIds } from '../../../src/feed/queries';
import { deleteObservations } from '../../../src/db/forget';
import { ftsRanked, observationsTouching, recordRows, recordScope } from '../../../src/db/fts';
import { listVisibleProjects, projectsWithActivity } from '../../../src/db/projects';
import { contextObservationsOf, observationsWithContext, promptsByIds, summariesByIds } from '../../../src/db/recall';
import { latestSession, markUsed, receiptsOf, receiptWrites } from '../../../src/db/receipts';
import { db } from '../../../src/db/client';
import { sweepRecords } from '../../../src/db/retention';
import {
  countUnembedded,
  markEmbedded,
  markEmbedFailed,
  observationsToEmbed,
  promptsToEmbed,
  summariesToEmbed,
  unembeddedIds,
} from '../../../src/db/vectors';
import { embedSkipped } from '../../../src/health/queries';
import { sessionsToRetire } from '../../../src/retention/queries';
import type { Caller } from '../../../src/db/caller';
import type { Viewer } from '../../../src/db/visibility';
import { BM25_WEIGHTS } from '../../../src/search/fts-query';
import { seedWorld } from '../support/seed';

interface Recorded {
  sql: string;
  params: unknown[];
}

/** A D1 stand-in that keeps every statement it is given and answers each with no rows. */
function recorder(): { d1: D1Database; statements: Recorded[] } {
  const statements: Recorded[] = [];
  const statement = (rec: Recorded): D1PreparedStatement => {
    const empty = { results: [], success: true, meta: {} };
    return {
      bind: (...params: unknown[]) => {
        rec.params = params;
        return statement(rec);
      },
      all: async () => empty,
      run: async () => empty,
      raw: async () => [],
      first: async () => null,
    } as unknown as D1PreparedStatement;
  };
  const d1 = {
    prepare: (sql: string) => {
      const rec = { sql, params: [] };
      statements.push(rec);
      return statement(rec);
    },
    batch: async (list: unknown[]) => list.map(() => ({ results: [], success: true, meta: {} })),
  } as unknown as D1Database;
  return { d1, statements };
}

/** The statements `work` sends (errors from its empty answers ignored: only the SQL matters here). */
async function statementsOf(work: (d1: D1Database) => Promise<unknown>): Promise<Recorded[]> {
  const r = recorder();
  await work(r.d1).catch(() => undefined);
  return r.statements;
}

/** D1's plan for one statement, one line per step. */
async function planOf(s: Recorded): Promise<string> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
    .bind(...s.params)
    .all<{ detail: string }>();
  return results.map((r) => r.detail).join('\n');
}

// Memory tables under their names and the aliases the search statements give them.
const WALKS_A_TEAM =
  /(SCAN|SEARCH) (observations|summaries|prompts|observation_files|o|s|pm)\b.*\b(idx_obs_team_time|idx_obs_project_time|idx_summaries_project_time|idx_prompts_project|idx_obs_files_path)\b|idx_obs_files_name \(team_id=\?\)/;
const SCANS_A_TABLE = /\bSCAN (observations|summaries|prompts|observation_files|o|s|pm)\b(?! VIRTUAL)/;
const MEMORY_TABLE = /\b(observations|summaries|prompts|observation_files)\b/i;

const viewer: Viewer = { teamId: 987_001, userId: 987_002, shareSensitive: false, seesHeld: false };
const ids = [11, 12, 13, 14, 15, 16, 17];

async function expectLookedUpById(work: (d1: D1Database) => Promise<unknown>): Promise<void> {
  const statements = (await statementsOf(work)).filter((s) => MEMORY_TABLE.test(s.sql) && !/^\s*insert/i.test(s.sql));
  expect(statements.length).toBeGreaterThan(0);
  for (const s of statements) {
    const plan = await planOf(s);
    expect(plan, s.sql).not.toMatch(WALKS_A_TEAM);
    expect(plan, s.sql).not.toMatch(SCANS_A_TABLE);
    // By id, or (the sources merged into those ids) through the partial index of merged rows.
    expect(plan, s.sql).toMatch(
      /PRIMARY KEY|sqlite_autoindex_observation_files_1|idx_obs_merged \(team_id=\? AND merged_into=\?\)/,
    );
  }
}

describe('statements that name rows by id', () => {
  it('look search results up by id, for every kind, instead of walking the team', async () => {
    for (const kind of ['observation', 'summary', 'prompt'] as const) {
      const scope = recordScope(kind, viewer, {
        projectIds: null,
        type: [],
        concept: [],
        file: [],
        author: [],
        platform: [],
      });
      await expectLookedUpById((d1) => recordRows(d1, ids, scope));
    }
  });

  it('look up the rows an agent fetches in full by id (observations, summaries and prompts)', async () => {
    await expectLookedUpById((d1) => observationsWithContext(d1, viewer, ids));
    await expectLookedUpById((d1) => summariesByIds(d1, viewer, ids));
    await expectLookedUpById((d1) => promptsByIds(d1, viewer, ids));
  });

  it("look up the live feed's re-checked rows by id", async () => {
    await expectLookedUpById((d1) => feedItemsByIds(d1, viewer, ids, []));
    await expectLookedUpById((d1) => feedItemsByIds(d1, viewer, [], ids));
  });

  it('look up the rows to embed and mark embedded by id', async () => {
    await expectLookedUpById((d1) => observationsToEmbed(d1, viewer.teamId, ids));
    await expectLookedUpById((d1) => summariesToEmbed(d1, viewer.teamId, ids));
    await expectLookedUpById((d1) => promptsToEmbed(d1, viewer.teamId, ids));
    for (const kind of ['observation', 'summary', 'prompt'] as const) {
      await expectLookedUpById((d1) => markEmbedded(d1, viewer.teamId, kind, ids, 1));
      await expectLookedUpById((d1) => markEmbedFailed(d1, viewer.teamId, kind, ids));
    }
  });

  it('delete forgotten and expired rows by id, with their file rows', async () => {
    const audit = { actorUserId: viewer.userId, target: 'observation:11', detail: {}, at: 1 };
    await expectLookedUpById((d1) => deleteObservations(d1, viewer.teamId, ids, audit));
    await expectLookedUpById((d1) =>
      sweepRecords(d1, viewer.teamId, { observations: ids, summaries: ids, prompts: ids }, 0, 1, {
        action: 'retention.sweep.chunk',
        target: 'plan:0',
      }),
    );
  });
});

describe('keyword search', () => {
  it("checks each FTS match against the visibility rule by id, through the index that holds the rule's columns", async () => {
    const scope = recordScope('observation', viewer, {
      projectIds: null,
      type: [],
      concept: [],
      file: [],
      author: [],
      platform: [],
    });
    const [statement] = await statementsOf((d1) =>
      ftsRanked(d1, scope, { all: '"pool"', any: '"pool"' }, BM25_WEIGHTS, 60),
    );
    const plan = await planOf(statement!);
    // The FTS index drives; each match is one seek by id in idx_obs_readable, no seek per visible project.
    expect(plan).toMatch(/SCAN observations_fts VIRTUAL TABLE/);
    expect(plan).toMatch(/SEARCH o USING COVERING INDEX idx_obs_readable \(id=\?\)/);
  });
});

describe('file names in a search', () => {
  it('find the observations that touched a named file through the index of last path segments', async () => {
    const scope = recordScope('observation', viewer, {
      projectIds: null,
      type: [],
      concept: [],
      file: [],
      author: [],
      platform: [],
    });
    const [statement] = await statementsOf((d1) => observationsTouching(d1, ['auth/verify-token.ts'], scope, 60));
    expect(statement!.params).toContain(JSON.stringify(['verify-token.ts']));
    expect(await planOf(statement!)).toMatch(
      /SEARCH observation_files USING INDEX idx_obs_files_name \(team_id=\? AND basename=\?\)/,
    );
  });
});

describe('project listings', () => {
  it("count each project's observations and sessions through the project's own index, never by scanning a table", async () => {
    const caller: Caller = { teamId: viewer.teamId, userId: viewer.userId, handle: 'plan-reader' };
    for (const work of [
      (d1: D1Database) => listVisibleProjects(d1, caller),
      (d1: D1Database) => projectsWithActivity(d1, viewer),
    ]) {
      const [statement] = await statementsOf(work);
      const plan = await planOf(statement!);
      expect(plan).not.toMatch(/\bSCAN (observations|sessions)\b/);
      expect(plan).toMatch(
        /SEARCH (observations|sessions) USING (COVERING )?INDEX idx_(obs_project_time|sessions_project) \(team_id=\? AND project_id=\?\)/,
      );
    }
  });
});

describe('the records to embed', () => {
  it('are found through the partial indexes of records to embed, skipped ones left out of them', async () => {
    const index = {
      observation: 'idx_obs_unembedded',
      summary: 'idx_summaries_unembedded',
      prompt: 'idx_prompts_unembedded',
    };
    for (const kind of ['observation', 'summary', 'prompt'] as const) {
      for (const work of [
        (d1: D1Database) => unembeddedIds(d1, viewer.teamId, kind, 100, 42),
        (d1: D1Database) => countUnembedded(d1, viewer.teamId, kind),
      ]) {
        const [statement] = await statementsOf(work);
        expect(await planOf(statement!), statement!.sql).toMatch(
          new RegExp(`USING (COVERING )?INDEX ${index[kind]}\\b`),
        );
      }
    }
    const skipped = await statementsOf((d1) => embedSkipped(d1, viewer.teamId));
    expect(skipped).toHaveLength(3);
    for (const s of skipped) expect(await planOf(s), s.sql).toMatch(/USING (COVERING )?INDEX idx_\w+_embed_skipped\b/);
  });
});

describe('the sweep of stranded session objects', () => {
  it('pages through sessions past their retire time by its index, never scanning the sessions of every team', async () => {
    for (const after of [null, { at: 5, id: 9 }]) {
      const [statement] = await statementsOf((d1) => sessionsToRetire(d1, 1_000, after, 20));
      const plan = await planOf(statement!);
      expect(plan, statement!.sql).toMatch(/SEARCH sessions USING INDEX idx_sessions_retire \(retire_after/);
      expect(plan, statement!.sql).not.toMatch(/SCAN sessions|USE TEMP B-TREE/);
    }
  });
});

describe('what D1 counts as read', () => {
  it('reads the rows to embed at the cost of those rows, not of every row of the team', async () => {
    const world = await seedWorld();
    const { teamId, userId } = world.ids;
    const t0 = Date.UTC(2026, 0, 1);
    await env.DB.prepare(
      `INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, facts, concepts, files_read, files_modified,
          cjk_terms, created_at, stored_at, discovery_tokens, content_hash, author_user_id)
       SELECT ?1, ?2, ?3, 1, 'discovery', 'row ' || n, '[]', '[]', '[]', '[]', '', ?4 + n, ?4 + n, 0, 'h' || n, ?5
         FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 300) SELECT n FROM c)`,
    )
      .bind(teamId, world.projectId, world.sessionId, t0, userId)
      .run();
    const { results } = await env.DB.prepare('SELECT id FROM observations WHERE session_id = ? ORDER BY id LIMIT 3')
      .bind(world.sessionId)
      .all<{ id: number }>();
    const [statement] = await statementsOf((d1) =>
      observationsToEmbed(
        d1,
        teamId,
        results.map((r) => r.id),
      ),
    );
    const rowsRead = async (sql: string, params: unknown[]) => {
      const out = await env.DB.prepare(sql)
        .bind(...params)
        .all();
      return { rows: out.results.length, read: out.meta.rows_read ?? Number.NaN };
    };
    const byId = await rowsRead(statement!.sql, statement!.params);
    expect(byId.rows).toBe(3);
    expect(byId.read).toBeLessThan(40);
    // As the statement was written before: the team's condition free to pick an index.
    const [ids, team] = statement!.params;
    const before = statement!.sql.replace(
      /\((.+) IN \(SELECT value FROM json_each\(\?\)\) AND \+\((.+)\)\)/s,
      '($2 AND $1 IN (SELECT value FROM json_each(?)))',
    );
    const walked = await rowsRead(before, [team, ids]);
    expect(walked.rows).toBe(3);
    expect(walked.read).toBeGreaterThanOrEqual(300);
  });
});

describe('the context index with fading (src/db/fading.ts)', () => {
  it('reads the rows made since the cutoff as a range of the time index, and older rows renewed since it through idx_obs_renewed', async () => {
    const [recent, renewed] = await statementsOf((d1) =>
      contextObservationsOf(d1, viewer, 5, ['discovery'], ['how-it-works'], 50, 1_000),
    );
    // A faded history is never walked: both statements are ranges bounded by the cutoff.
    expect(await planOf(recent!)).toMatch(
      /SEARCH observations USING INDEX idx_obs_project_time \(team_id=\? AND project_id=\? AND created_at>\?\)/,
    );
    expect(await planOf(renewed!)).toMatch(
      /SEARCH observations USING INDEX idx_obs_renewed \(team_id=\? AND project_id=\? AND renewed_at>\?\)/,
    );
  });
});

describe('receipts (src/db/receipts.ts)', () => {
  it("find a session's receipts, a device's latest session and what to trim by index, never by scanning the table", async () => {
    const s = { teamId: viewer.teamId, sessionKey: 'plan-session', projectId: 5, userId: viewer.userId, deviceId: 3 };
    const statements = [
      ...(await statementsOf((d1) => receiptsOf(d1, viewer, 'plan-session', viewer.userId))),
      ...(await statementsOf((d1) => latestSession(d1, s, 5))),
      ...(await statementsOf((d1) => markUsed(d1, s, ids, 1))),
      ...(await statementsOf(async (d1) => {
        const d = db(d1);
        for (const q of receiptWrites(d, s, { channel: 'index', items: [[11, 'current', '']], at: 1, start: true }))
          await q;
      })),
    ];
    expect(statements.length).toBeGreaterThan(5);
    for (const st of statements) {
      const plan = await planOf(st);
      expect(plan, st.sql).not.toMatch(/\bSCAN receipts\b/);
      if (/from "receipts"/i.test(st.sql)) expect(plan, st.sql).toMatch(/idx_receipts_(record|start)/);
    }
  });
});
