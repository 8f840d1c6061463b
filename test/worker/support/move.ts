// A team move run to its end inside the test (the `move-team` job's own steps, one after another, with a clock
// that jumps over the waits between them), for tests that need the move done with an environment of their own
// (a spied Vectorize binding). The moved rows are embedded the same way, by the `embed` job's steps.
import { env } from 'cloudflare:workers';
import { configOf } from '../../../src/config';
import { currentUsage, metered, type Usage } from '../../../src/db/meter';
import type { CairnEnv } from '../../../src/env';
import { stepContext } from '../../../src/jobs/step';
import type { JobKind, StepOutcome } from '../../../src/jobs/types';
import { moveJob, type MoveCursor, type MoveParams } from '../../../src/transfer/move-job';
import { embedJob } from '../../../src/vectors/embed-job';
import { runOpenJobs } from './jobs';

async function runInline<P, C>(e: CairnEnv, kind: JobKind<P, C>, teamId: number, params: P): Promise<unknown> {
  let now = Date.now();
  let { cursor } = kind.init(params, { teamId, now });
  for (let i = 0; i < 5_000; i++) {
    const ctx = stepContext({
      env: e,
      jobId: 'inline',
      teamId,
      actorUserId: null,
      budget: configOf(e).jobStep,
      clock: () => now,
    });
    const out = await kind.step(ctx, params, cursor);
    cursor = out.cursor;
    if (out.done) return out.result;
    now += (out.waitMs ?? 0) + 1;
  }
  throw new Error(`${kind.name} did not finish`);
}

export async function moveNow(e: CairnEnv, teamId: number, to: string, force = false): Promise<unknown> {
  const result = await runInline(e, moveJob, teamId, { to, force, settleMs: 0 });
  // The move started an `embed` job in the team's lane, which runs with the lane's own environment (the local
  // index): it ends first, then the moved rows are embedded again with `e`'s, as that job would in production
  // (racing it left some rows embedded locally and skipped by the job run here).
  await runOpenJobs(teamId, 'embed');
  const d = (env as unknown as Record<string, D1Database>)[to]!;
  await d.batch(
    ['observations', 'summaries', 'prompts'].map((t) =>
      d.prepare(`UPDATE ${t} SET embedded_at = NULL WHERE team_id = ?`).bind(teamId),
    ),
  );
  await runInline(e, embedJob, teamId, { mode: 'missing' });
  return result;
}

/** One step of a move run by `moveSteps`: the phase it started in, its outcome and what it asked of D1. */
export interface MoveStep {
  phase: MoveCursor['phase'];
  out: StepOutcome<MoveCursor>;
  used: Usage;
}

/**
 * Runs the `move-team` job's steps in this test's invocation with `e` (each step metered, as the lane runs it,
 * on a clock that runs and jumps over the waits between steps), calling `each` after every step; answers the
 * steps. `each` may run the team's writes between two steps (they land wherever the team is at that moment).
 * `repeat` runs a phase's steps twice each, as after a death between a step's writes and its saved cursor.
 */
export async function moveSteps(
  e: CairnEnv,
  teamId: number,
  input: Partial<MoveParams> & { to: string },
  each: (step: MoveStep, i: number) => Promise<void> | void = () => {},
  opts: { maxSteps?: number; repeat?: (phase: MoveCursor['phase']) => boolean } = {},
): Promise<MoveStep[]> {
  const maxSteps = opts.maxSteps ?? 5_000;
  const params = moveJob.params.parse({ settleMs: 0, ...input });
  // Real time plus the waits jumped over: a step's own pauses (`breathe`) and budget see time pass.
  let skew = 0;
  const clock = () => Date.now() + skew;
  let { cursor } = moveJob.init(params, { teamId, now: clock() });
  const steps: MoveStep[] = [];
  for (let i = 0; i < maxSteps; i++) {
    const phase = cursor.phase;
    const run = () => {
      const ctx = stepContext({
        env: e,
        jobId: 'inline',
        teamId,
        actorUserId: null,
        budget: configOf(e).jobStep,
        clock,
      });
      return metered(e, 'job move-team', async () => ({
        phase,
        out: await moveJob.step(ctx, params, cursor),
        used: currentUsage()!,
      }));
    };
    // `repeat`: the step's invocation died after its writes landed, before the lane saved its cursor; the lane
    // runs it again from the same cursor, and that run's outcome is the one kept.
    if (opts.repeat?.(phase)) await run();
    const step = await run();
    steps.push(step);
    await each(step, i);
    if (step.out.done) return steps;
    cursor = step.out.cursor;
    skew += (step.out.waitMs ?? 0) + 1;
  }
  throw new Error(`the move did not finish in ${maxSteps} steps`);
}

/** Every table a team's memory lives in on a shard, for counting what a move carried. */
export const TEAM_TABLES = [
  'projects',
  'project_aliases',
  'sessions',
  'prompts',
  'observations',
  'observation_files',
  'summaries',
  'observation_events',
  'observation_signals',
  'prime_tombstones',
  'audit_log',
  'observer_usage',
] as const;

/** How many rows of the team each table of `d` holds. */
export async function teamCounts(d: D1Database, teamId: number): Promise<Record<string, number>> {
  const rows = await d.batch(
    TEAM_TABLES.map((t) => d.prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE team_id = ?`).bind(teamId)),
  );
  return Object.fromEntries(TEAM_TABLES.map((t, i) => [t, (rows[i]!.results[0] as { n: number }).n]));
}

/**
 * A team's memory of every kind straight into `d` (one statement per kind): per project a session with `n`
 * observations (a file row each; every third superseded by the next, every fifth primed), prompts and
 * summaries, with events, signals, aliases, tombstones, audit and usage rows. Answers the session keys.
 */
export async function seedMemory(
  d: D1Database,
  ids: { teamId: number; userId: number },
  word: string,
  opts: { projects?: number; n?: number } = {},
): Promise<{ projects: string[]; sessions: string[] }> {
  const out = { projects: [] as string[], sessions: [] as string[] };
  const n = opts.n ?? 50;
  for (let p = 0; p < (opts.projects ?? 2); p++) {
    const key = `github.com/${word}/project-${p}`;
    const sessionKey = `${word}-session-${p}`;
    out.projects.push(key);
    out.sessions.push(sessionKey);
    const pid = (await d
      .prepare("INSERT INTO projects (team_id, key, visibility, created_at) VALUES (?, ?, 'team', 1) RETURNING id")
      .bind(ids.teamId, key)
      .first<{ id: number }>())!.id;
    const sid = (await d
      .prepare(
        'INSERT INTO sessions (team_id, session_key, project_id, user_id, prompt_count, started_at) VALUES (?, ?, ?, ?, 3, 1) RETURNING id',
      )
      .bind(ids.teamId, sessionKey, pid, ids.userId)
      .first<{ id: number }>())!.id;
    const series = (upTo: number) =>
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${upTo})`;
    await d.batch([
      d
        .prepare(
          `${series(n)} INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, narrative, facts, files_read, created_at, stored_at, content_hash, author_user_id, source)
           SELECT ?1, ?2, ?3, 1, 'discovery', ?4 || ' fact ' || i, 'the ' || ?4 || ' cache needs key ' || i, '["a fact"]', '["src/f' || i || '.ts"]', 1000 + i, 1000 + i, ?4 || '-h' || i, ?5,
                  CASE WHEN i % 5 = 0 THEN 'prime' ELSE 'observer' END FROM n`,
        )
        .bind(ids.teamId, pid, sid, word, ids.userId),
      d
        .prepare(
          `INSERT INTO observation_files (observation_id, team_id, project_id, path, kind)
           SELECT id, team_id, project_id, json_extract(files_read, '$[0]'), 'read' FROM observations WHERE session_id = ?`,
        )
        .bind(sid),
      d
        .prepare(
          `UPDATE observations SET superseded_by = (SELECT o2.id FROM observations o2 WHERE o2.session_id = observations.session_id AND o2.content_hash = ?2 || '-h' || (CAST(substr(observations.content_hash, length(?2) + 3) AS INTEGER) + 1))
           WHERE session_id = ?1 AND CAST(substr(content_hash, length(?2) + 3) AS INTEGER) % 3 = 0 AND CAST(substr(content_hash, length(?2) + 3) AS INTEGER) < ?3`,
        )
        .bind(sid, word, n),
      d
        .prepare(
          `INSERT INTO observation_events (team_id, observation_id, action, by_observation_id, actor_user_id, actor, reason, created_at)
           SELECT team_id, id, 'supersede', superseded_by, ?2, 'user', 'replaced', 2000 FROM observations WHERE session_id = ?1 AND superseded_by IS NOT NULL`,
        )
        .bind(sid, ids.userId),
      d
        .prepare(
          `INSERT INTO observation_signals (observation_id, team_id, fetched, useful, wrong, outdated, review, updated_at)
           SELECT id, team_id, 3, 1, 0, 0, NULL, 3000 FROM observations WHERE session_id = ? AND id % 2 = 0`,
        )
        .bind(sid),
      d
        .prepare(
          `${series(3)} INSERT INTO prompts (team_id, project_id, session_id, prompt_number, text, created_at, author_user_id)
           SELECT ?, ?, ?, i, 'the ' || ? || ' prompt ' || i, 900 + i, ? FROM n`,
        )
        .bind(ids.teamId, pid, sid, word, ids.userId),
      d
        .prepare(
          `${series(2)} INSERT INTO summaries (team_id, project_id, session_id, prompt_number, request, learned, created_at, content_hash, author_user_id)
           SELECT ?, ?, ?, i, 'the ' || ? || ' request ' || i, 'learned ' || i, 1500 + i, ? || '-s' || i, ? FROM n`,
        )
        .bind(ids.teamId, pid, sid, word, word, ids.userId),
      d
        .prepare(
          `${series(3)} INSERT INTO project_aliases (team_id, key, project_id, created_at) SELECT ?, ? || '-old-' || i, ?, 1 FROM n`,
        )
        .bind(ids.teamId, key, pid),
      d
        .prepare(
          `${series(2)} INSERT INTO prime_tombstones (team_id, project_id, hash, created_at) SELECT ?, ?, printf('%016x', ?3 * 100 + i), 1 FROM n`,
        )
        .bind(ids.teamId, pid, pid),
      d
        .prepare(
          `${series(3)} INSERT INTO audit_log (team_id, actor_user_id, action, target, detail, created_at) SELECT ?, ?, 'seed', 'x' || i, '{}', 4000 + i FROM n`,
        )
        .bind(ids.teamId, ids.userId),
      d
        .prepare(
          `${series(2)} INSERT INTO observer_usage (team_id, day, session_id, model, calls, input_tokens, output_tokens) SELECT ?, '2026-05-0' || i, ?, 'm', i, 10 * i, i FROM n`,
        )
        .bind(ids.teamId, sid),
    ]);
  }
  return out;
}

/**
 * The team's memory on `d` as what survives a move: every row named by keys, not ids (a record by its session's key
 * and its content hash or number, a link by what it points at), sorted. Two databases holding the same memory
 * answer the same lists.
 */
export async function teamDigest(d: D1Database, teamId: number): Promise<Record<string, string[]>> {
  const rec = (t: string, key: string, text: string) =>
    `SELECT s.session_key || '|' || r.${key} || '|' || p.key || '|' || coalesce(r.held_kinds, '') || '|' || coalesce(r.released_at, '') || '|' || coalesce(r.released_by, '') || '|' || coalesce(r.${text}, '') AS k
       FROM ${t} r JOIN sessions s ON s.id = r.session_id JOIN projects p ON p.id = r.project_id WHERE r.team_id = ?1`;
  const obsKey = (alias: string) =>
    `(SELECT s2.session_key || '/' || o2.content_hash FROM observations o2 JOIN sessions s2 ON s2.id = o2.session_id WHERE o2.id = ${alias})`;
  const queries: Record<string, string> = {
    projects:
      "SELECT key || '|' || visibility || '|' || coalesce(owner_user_id, '') AS k FROM projects WHERE team_id = ?1",
    aliases:
      "SELECT a.key || '|' || p.key AS k FROM project_aliases a JOIN projects p ON p.id = a.project_id WHERE a.team_id = ?1",
    sessions: `SELECT s.session_key || '|' || p.key || '|' || s.prompt_count || '|' || coalesce(s.ended_at, '') || '|' || s.user_id AS k
       FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.team_id = ?1`,
    prompts: rec('prompts', 'prompt_number', 'text'),
    observations: rec('observations', 'content_hash', 'title'),
    summaries: rec('summaries', 'content_hash', 'request'),
    links: `SELECT ${obsKey('o.id')} || '|' || coalesce(${obsKey('o.superseded_by')}, '') || '|' || coalesce(${obsKey('o.merged_into')}, '') AS k
       FROM observations o WHERE o.team_id = ?1 AND (o.superseded_by IS NOT NULL OR o.merged_into IS NOT NULL)`,
    files:
      "SELECT (SELECT s.session_key FROM sessions s WHERE s.id = o.session_id) || '|' || o.content_hash || '|' || f.path || '|' || f.kind || '|' || f.project_id = o.project_id AS k FROM observation_files f JOIN observations o ON o.id = f.observation_id WHERE f.team_id = ?1",
    events: `SELECT ${obsKey('e.observation_id')} || '|' || e.action || '|' || coalesce(${obsKey('e.by_observation_id')}, '') || '|' || coalesce(e.reason, '') || '|' || e.created_at AS k FROM observation_events e WHERE e.team_id = ?1`,
    signals: `SELECT ${obsKey('g.observation_id')} || '|' || g.fetched || '|' || g.useful || '|' || g.wrong || '|' || g.outdated || '|' || coalesce(g.review, '') AS k FROM observation_signals g WHERE g.team_id = ?1`,
    tombstones:
      "SELECT p.key || '|' || t.hash AS k FROM prime_tombstones t JOIN projects p ON p.id = t.project_id WHERE t.team_id = ?1",
    // Usage of a session forgotten since names no session: a move carries none of it (there is no row to name).
    usage:
      "SELECT s.session_key || '|' || u.day || '|' || u.model || '|' || u.calls || '|' || u.input_tokens AS k FROM observer_usage u JOIN sessions s ON s.id = u.session_id WHERE u.team_id = ?1",
    audit: "SELECT action || '|' || coalesce(target, '') || '|' || created_at AS k FROM audit_log WHERE team_id = ?1",
  };
  const names = Object.keys(queries);
  const results = await d.batch(names.map((n) => d.prepare(queries[n]!).bind(teamId)));
  return Object.fromEntries(names.map((n, i) => [n, (results[i]!.results as { k: string }[]).map((r) => r.k).sort()]));
}
