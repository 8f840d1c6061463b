// A team move copies while the team writes, then closes writes only for the tail (issue 35). Between the move's
// steps the team remembers, stores an observer's turns, supersedes, gives feedback, changes a project's
// visibility and forgets records and a session; after the move the new database holds exactly what the old one
// held at the flip (every table, compared by keys), what was forgotten during the copy is in no table or index of
// either database, and writes were refused for a handful of steps, however many the copy took.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { initEvent, send, settled, toolEvent, waitFor } from '../pipeline/support';
import { call, fresh } from '../support/http';
import { runOpenJobs } from '../support/jobs';
import { moveSteps, seedMemory, teamDigest, type MoveStep } from '../support/move';
import { idsOf } from '../support/seed';
import { d1Holding, secretWord } from '../support/storage-scan';
import { mcp } from '../teams/isolation-support';
import { newOwner } from '../teams/support';

const CLOSED = ['close', 'quiesce', 'tail', 'release'];
/** The moves here run with Paid's step budget (fewer, larger steps; move-params.test.ts runs one on Free's). */
const paid = { ...env, CAIRN_PLAN: 'paid' } as typeof env;

const one = async <T>(d: D1Database, sql: string, ...args: unknown[]) =>
  (await d
    .prepare(sql)
    .bind(...args)
    .first<T>())!;

async function remember(token: string, project: string, text: string): Promise<number> {
  const r = await mcp(token, 'tools/call', { name: 'remember', arguments: { project, text } });
  const id = /#(\d+)/.exec(r.text)?.[1];
  if (!id) throw new Error(`remember: ${r.status} ${r.text}`);
  return Number(id);
}

const obsOn = (d: D1Database, teamId: number, like: string) =>
  one<{ n: number }>(
    d,
    'SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND (title LIKE ?2 OR narrative LIKE ?2)',
    teamId,
    `%${like}%`,
  ).then((r) => r.n);

describe('a team move that copies while the team writes', { timeout: 600_000 }, () => {
  it('lands every write of the copy on the new database, keeps what was forgotten forgotten, and closes writes only for the tail', async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    const word = fresh('w').replace(/\W/g, '');
    const seeded = await seedMemory(env.DB, ids, word, { projects: 3, n: 100 });
    // Before the move: a note and a session whose texts will be forgotten during the copy.
    const [noteWord, sessionWord, lateWord] = [secretWord(), secretWord(), secretWord()];
    const project = `github.com/${word}/notes`;
    const forgetMe = await remember(a.token, project, `The deploy key rotation note ${noteWord} is obsolete.`);
    const gone = fresh('gone');
    await send(a.token, 'init', initEvent(gone, `Investigate the ${sessionWord} outage`));
    await send(a.token, 'observations', toolEvent(gone, `grep ${sessionWord} logs/`));
    await waitFor(a.token, gone, (s) => settled(s) && s.observations_stored >= 1);
    const live = fresh('live');
    const seededObs = async (n: number) =>
      (
        await one<{ id: number }>(
          env.DB,
          'SELECT id FROM observations WHERE team_id = ? AND content_hash = ?',
          ids.teamId,
          `${word}-h${n}`,
        )
      ).id;
    const [superseded, useful, forgotten] = [await seededObs(7), await seededObs(8), await seededObs(9)];

    const done = new Set<string>();
    const once = async (name: string, when: boolean, act: () => Promise<void>) => {
      if (when && !done.has(name)) {
        done.add(name);
        await act();
      }
    };
    const refusedWhileClosed: number[] = [];
    let atFlip: Record<string, string[]> | null = null;
    const steps: MoveStep[] = await moveSteps(paid, ids.teamId, { to: 'DB_1' }, async (step) => {
      const phase = step.out.cursor.phase;
      // Copying (the first records are on the new database already): the team goes on writing.
      await once('copying', phase === 'copy', async () => {
        await remember(a.token, project, `Remembered during the copy: ${word} builds need the locale.`);
        await send(a.token, 'init', initEvent(live, `Fix the ${word} build`));
        await send(a.token, 'observations', toolEvent(live, `npm run build -- ${word}`));
        await waitFor(a.token, live, (s) => settled(s) && s.observations_stored >= 1);
        for (const [path, json] of [
          ['/api/corrections/supersede', { id: superseded, reason: 'out of date' }],
          ['/api/corrections/feedback', { id: useful, kind: 'useful' }],
          ['/api/forget', { kind: 'observation', id: forgotten }],
          ['/api/forget', { kind: 'observation', id: forgetMe }],
          ['/api/admin/projects/visibility', { key: seeded.projects[1], visibility: 'private' }],
        ] as const) {
          const res = await call(path, { token: a.token, json });
          expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
        }
        // A project key stays as it is while the move copies (the new database knows projects by key).
        const rename = await call('/api/admin/projects/rename', {
          token: a.token,
          json: { from: seeded.projects[0], to: `${seeded.projects[0]}-renamed` },
        });
        expect(rename.status, await rename.clone().text()).toBe(503);
        expect(((await rename.json()) as { error: { code: string } }).error.code).toBe('team_moving');
        // So does a record's text: the change log notes its state, not its words (migration 0032).
        const before = await one<{ title: string }>(env.DB, 'SELECT title FROM observations WHERE id = ?', useful);
        const edit = await call('/api/corrections/edit', {
          token: a.token,
          json: { id: useful, title: `Edited during the copy ${word}`, reason: 'clearer' },
        });
        expect(edit.status, await edit.clone().text()).toBe(503);
        expect(((await edit.json()) as { error: { code: string } }).error.code).toBe('team_moving');
        expect(await one<{ title: string }>(env.DB, 'SELECT title FROM observations WHERE id = ?', useful)).toEqual(
          before,
        );
      });
      await once('extras', phase === 'extras', async () => {
        const res = await call('/api/forget', { token: a.token, json: { kind: 'session', session_id: gone } });
        expect(res.status, await res.clone().text()).toBe(200);
      });
      await once('delta', phase === 'delta', async () => {
        // Stored and forgotten while the rounds run, the gate still open.
        const late = await remember(a.token, project, `A passing thought ${lateWord} about caches.`);
        const res = await call('/api/forget', { token: a.token, json: { kind: 'observation', id: late } });
        expect(res.status).toBe(200);
        await remember(a.token, project, `Remembered during the rounds: ${word} caches expire at noon.`);
      });
      // The gate is closed from the end of the `close` step until `release` opens it.
      if (['quiesce', 'tail', 'release'].includes(phase)) {
        const r = await call('/api/sessions/observations', { token: a.token, json: toolEvent(live, 'npm test') });
        refusedWhileClosed.push(r.status);
      }
      // The old database at the flip, before the drop empties it: what the new one must hold.
      if (phase === 'release' && atFlip === null) atFlip = await teamDigest(env.DB, ids.teamId);
    });

    expect([...done]).toEqual(['copying', 'extras', 'delta']);
    // Writes were refused for a handful of steps only (close, the quiesce and its 3 s grace, the last round,
    // release), out of the many the copy took.
    const closed = steps.filter((s) => CLOSED.includes(s.phase)).length;
    expect(closed, steps.map((s) => `${s.phase}:${s.out.waitMs ?? ''}`).join(' ')).toBeLessThanOrEqual(6);
    expect(steps.filter((s) => s.phase === 'copy').length).toBeGreaterThanOrEqual(3);
    expect(steps.length).toBeGreaterThan(closed * 3);
    expect(refusedWhileClosed.length).toBeGreaterThan(0);
    expect(refusedWhileClosed.every((s) => s === 503)).toBe(true);
    const result = steps.at(-1)!.out.result as { writes_closed: { steps: number }; moved: boolean };
    expect(result).toMatchObject({ moved: true, writes_closed: { steps: closed } });

    // Exactly what the old database held at the flip, every table, by keys.
    expect(atFlip).not.toBeNull();
    expect(await teamDigest(env.DB_1, ids.teamId)).toEqual(atFlip);
    // Which includes every write of the copy: on the new database.
    expect(await obsOn(env.DB_1, ids.teamId, `during the copy: ${word}`)).toBe(1);
    expect(await obsOn(env.DB_1, ids.teamId, `during the rounds: ${word}`)).toBe(1);
    const stored = await one<{ n: number }>(
      env.DB_1,
      'SELECT COUNT(*) AS n FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.team_id = ? AND s.session_key = ?',
      ids.teamId,
      live,
    );
    expect(stored.n).toBeGreaterThanOrEqual(1);
    expect(
      await one<{ n: number }>(
        env.DB_1,
        `SELECT COUNT(*) AS n FROM observations o JOIN sessions s ON s.id = o.session_id
          WHERE o.team_id = ? AND s.session_key = ? AND o.content_hash = ? AND o.superseded_by IS NOT NULL`,
        ids.teamId,
        seeded.sessions[0],
        `${word}-h7`,
      ),
    ).toEqual({ n: 1 });
    expect(
      await one<{ visibility: string }>(
        env.DB_1,
        'SELECT visibility FROM projects WHERE team_id = ? AND key = ?',
        ids.teamId,
        seeded.projects[1],
      ),
    ).toEqual({ visibility: 'private' });
    expect(
      await one<{ n: number }>(
        env.DB_1,
        `SELECT COUNT(*) AS n FROM observations o JOIN sessions s ON s.id = o.session_id
          WHERE o.team_id = ? AND s.session_key = ? AND o.content_hash = ?`,
        ids.teamId,
        seeded.sessions[0],
        `${word}-h9`,
      ),
    ).toEqual({ n: 0 });
    expect(
      await one<{ n: number }>(
        env.DB_1,
        'SELECT COUNT(*) AS n FROM sessions WHERE team_id = ? AND session_key = ?',
        ids.teamId,
        gone,
      ),
    ).toEqual({ n: 0 });
    // What was forgotten during the copy is in no table or index of either database, once the FTS upkeep the move
    // asked for has merged the segments.
    await runOpenJobs(null, 'fts-upkeep');
    for (const w of [noteWord, sessionWord, lateWord]) {
      expect(await d1Holding(w, env.DB_1), w).toEqual([]);
      expect(await d1Holding(w, env.DB), w).toEqual([]);
    }
    // The old database holds nothing of the team, its change log included.
    expect(
      await one<{ n: number }>(env.DB, 'SELECT COUNT(*) AS n FROM move_changes WHERE team_id = ?', ids.teamId),
    ).toEqual({ n: 0 });
    expect(await obsOn(env.DB, ids.teamId, word)).toBe(0);
  });

  it('carries a merge of projects, and a session forgotten and begun again under the same key, as the old database ends', async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    const word = fresh('w').replace(/\W/g, '');
    const seeded = await seedMemory(env.DB, ids, word, { projects: 3, n: 120 });
    const again = seeded.sessions[2]!;
    let atFlip: Record<string, string[]> | null = null;
    let acted = false;
    await moveSteps(paid, ids.teamId, { to: 'DB_1' }, async (step) => {
      const phase = step.out.cursor.phase;
      // After the copy: the new database holds both projects and the session as they were.
      if (phase === 'extras' && !acted) {
        acted = true;
        const merged = await call('/api/admin/projects/merge', {
          token: a.token,
          json: { from: seeded.projects[1], into: seeded.projects[0] },
        });
        expect(merged.status, await merged.clone().text()).toBe(200);
        const forgot = await call('/api/forget', { token: a.token, json: { kind: 'session', session_id: again } });
        expect(forgot.status, await forgot.clone().text()).toBe(200);
        // The same session key again: a new session row (new id) in another project, with a new turn, and a record
        // under a key the forgotten session had used (written as an import of the same content would be).
        await send(a.token, 'init', initEvent(again, `Start over on ${word}`));
        await send(a.token, 'observations', toolEvent(again, `npm run build -- ${word} again`));
        await waitFor(a.token, again, (s) => settled(s) && s.observations_stored >= 1);
        await env.DB.prepare(
          `INSERT INTO observations (team_id, project_id, session_id, type, title, narrative, created_at, stored_at, content_hash, author_user_id)
           SELECT team_id, project_id, id, 'discovery', 'told again', 'told again', 5, 5, ?, user_id FROM sessions WHERE team_id = ? AND session_key = ?`,
        )
          .bind(`${word}-h5`, ids.teamId, again)
          .run();
      }
      if (phase === 'release' && atFlip === null) atFlip = await teamDigest(env.DB, ids.teamId);
    });
    expect(acted).toBe(true);
    expect(atFlip).not.toBeNull();
    const moved = await teamDigest(env.DB_1, ids.teamId);
    expect(moved).toEqual(atFlip);
    // The merged project is gone there too, and the session holds only what it stored since it began again.
    expect(moved.projects.some((p) => p.startsWith(`${seeded.projects[1]}|`))).toBe(false);
    expect(moved.observations.filter((o) => o.startsWith(`${again}|`)).length).toBeGreaterThanOrEqual(1);
    expect(moved.observations.filter((o) => o.startsWith(`${again}|${word}-h`))).toEqual([
      expect.stringMatching(new RegExp(`^${again}\\|${word}-h5\\|.*\\|told again$`)),
    ]);
  });
});

describe('a team move whose change log lapsed', { timeout: 300_000 }, () => {
  it('copies again from a cleared target: a change made while nothing was noting is not lost', async () => {
    const a = await newOwner();
    const ids = await idsOf(a);
    const word = fresh('w').replace(/\W/g, '');
    const seeded = await seedMemory(env.DB, ids, word, { projects: 2, n: 150 });
    let lapsed = false;
    let atFlip: Record<string, string[]> | null = null;
    const steps = await moveSteps(paid, ids.teamId, { to: 'DB_1' }, async (step) => {
      const phase = step.out.cursor.phase;
      if (phase === 'delta' && !lapsed) {
        lapsed = true;
        // The move's steps stopped for longer than the lease: the triggers stop noting, and a change goes unnoted.
        await env.DB.prepare('UPDATE move_tracking SET until = 1 WHERE team_id = ?').bind(ids.teamId).run();
        await env.DB.prepare("UPDATE observations SET title = 'changed unnoted' WHERE team_id = ? AND content_hash = ?")
          .bind(ids.teamId, `${word}-h3`)
          .run();
        expect(
          await one<{ n: number }>(env.DB, 'SELECT COUNT(*) AS n FROM move_changes WHERE team_id = ?', ids.teamId),
        ).toEqual({ n: 0 });
      }
      if (phase === 'release' && atFlip === null) atFlip = await teamDigest(env.DB, ids.teamId);
    });
    expect(lapsed).toBe(true);
    // It noticed at its next step and started over from `clear`.
    const after = steps.findIndex((s, i) => i > 0 && s.phase === 'delta');
    expect(steps.slice(after).some((s) => s.phase === 'clear')).toBe(true);
    expect(await teamDigest(env.DB_1, ids.teamId)).toEqual(atFlip);
    expect(
      (await teamDigest(env.DB_1, ids.teamId)).observations.filter((o) => o.endsWith('|changed unnoted')),
    ).toHaveLength(seeded.projects.length);
  });
});
