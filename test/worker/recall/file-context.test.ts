// File context: path candidates, scoring and one-per-session (pure), and GET /api/context/file over HTTP.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { changedSince, normalizePath, pathCandidates, scoreFileHistory } from '../../../src/recall/file-context';
import type { FileHistoryRow } from '../../../src/recall/records';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';

const row = (
  id: number,
  sessionId: number,
  createdAt: number,
  filesRead: string[],
  filesModified: string[] = [],
): FileHistoryRow => ({
  id,
  sessionId,
  createdAt,
  type: 'discovery',
  title: `obs ${id}`,
  filesRead,
  filesModified,
  author: 'ana',
});

describe('file context scoring', () => {
  it('normalises separators, dot segments and doubled slashes', () => {
    expect(normalizePath('src\\lib//./a.ts')).toBe('src/lib/a.ts');
    expect(normalizePath('/home/u/repo/src/')).toBe('/home/u/repo/src');
  });

  it('derives the relative spelling from an absolute path under cwd, and the absolute one from a relative path', () => {
    expect(pathCandidates(['/home/u/repo/src/a.ts'], '/home/u/repo')).toEqual({
      all: ['/home/u/repo/src/a.ts', 'src/a.ts'],
      relative: ['src/a.ts'],
    });
    expect(pathCandidates(['./src/a.ts'], '/home/u/repo/')).toEqual({
      all: ['src/a.ts', '/home/u/repo/src/a.ts'],
      relative: ['src/a.ts'],
    });
    expect(pathCandidates(['/elsewhere/a.ts'], '/home/u/repo').relative).toEqual([]);
  });

  it('scores modified +2, at most 3 files +2, at most 8 files +1, and keeps the newest row per session', () => {
    const many = Array.from({ length: 9 }, (_, i) => `f${i}.ts`);
    const rows = [
      row(1, 10, 100, ['a.ts', ...many]), // read among 10 files: 0
      row(2, 11, 200, ['a.ts', 'b.ts', 'c.ts', 'd.ts']), // ≤ 8 files: 1
      row(3, 12, 300, ['a.ts'], ['a.ts']), // modified and alone: 4
      row(4, 13, 400, ['a.ts', 'b.ts']), // ≤ 3 files: 2
      row(5, 12, 250, ['a.ts'], ['a.ts']), // older row of session 12: dropped
    ];
    const scored = scoreFileHistory(rows, ['a.ts']);
    expect(scored.map((r) => [r.id, r.score])).toEqual([
      [3, 4],
      [4, 2],
      [2, 1],
      [1, 0],
    ]);
  });

  it('keeps newest-first order among equal scores and stops at 15', () => {
    const rows = Array.from({ length: 20 }, (_, i) => row(i + 1, 100 + i, 1000 + i, ['a.ts']));
    const scored = scoreFileHistory(rows, ['a.ts']);
    expect(scored).toHaveLength(15);
    expect(scored[0]!.id).toBe(20);
    expect(scored[14]!.id).toBe(6);
  });

  it('calls the history stale only when the file changed after the newest observation', () => {
    const rows = [row(1, 1, 1000, ['a']), row(2, 2, 2000, ['a'])];
    expect(changedSince(rows, 2001)).toBe(true);
    expect(changedSince(rows, 2000)).toBe(false);
    expect(changedSince(rows, 1500)).toBe(false);
    expect(changedSince(rows, undefined)).toBe(false);
  });
});

describe('GET /api/context/file', () => {
  async function setup() {
    const me = await newIdentity();
    const ids = await idsOf(me);
    const key = `github.com/acme/${fresh('repo')}`;
    const project = await seedProject(ids, key);
    return { me, ids, key, project };
  }
  const ask = (token: string, q: string) => call(`/api/context/file?${q}`, { token });

  it('lists the history of a file stored with a relative path, asked for by absolute path and cwd', async () => {
    const { me, ids, key, project } = await setup();
    const s1 = await seedSession(ids, project, fresh('s'));
    const s2 = await seedSession(ids, project, fresh('s'));
    const a = await seedObservation(ids, project, s1, {
      title: 'Parser skips BOM',
      filesModified: ['src/parse.ts'],
      createdAt: 1_000_000,
    });
    const b = await seedObservation(ids, project, s2, {
      title: 'Parser read during review',
      filesRead: ['src/parse.ts', 'src/a.ts', 'src/b.ts', 'src/c.ts'],
      createdAt: 2_000_000,
    });
    await seedObservation(ids, project, s2, {
      title: 'Unrelated file',
      filesRead: ['src/other.ts'],
      createdAt: 3_000_000,
    });
    const res = await ask(
      me.token,
      `project=${encodeURIComponent(key)}&path=${encodeURIComponent('/home/me/repo/src/parse.ts')}&cwd=${encodeURIComponent('/home/me/repo')}&mtime=1500000`,
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('cairn has notes on src/parse.ts from 2 earlier sessions');
    expect(text).toContain('Parser skips BOM');
    expect(text).toContain('Parser read during review');
    expect(text).not.toContain('Unrelated file');
    expect(text).toContain(`get_observations([${a}, ${b}])`);
  });

  it('finds a file stored with an absolute path when given both spellings as path candidates', async () => {
    const { me, ids, key, project } = await setup();
    await seedObservation(ids, project, await seedSession(ids, project, fresh('s')), {
      title: 'Absolute stored',
      filesRead: ['/home/me/repo/lib/x.ts'],
      createdAt: 5_000,
    });
    const text = await (
      await ask(me.token, `project=${encodeURIComponent(key)}&path=/home/me/repo/lib/x.ts&path=lib/x.ts`)
    ).text();
    expect(text).toContain('Absolute stored');
    const relOnly = await (await ask(me.token, `project=${encodeURIComponent(key)}&path=lib/x.ts`)).text();
    expect(relOnly).toBe('');
  });

  it('says nothing when the file changed after the newest observation of it', async () => {
    const { me, ids, key, project } = await setup();
    await seedObservation(ids, project, await seedSession(ids, project, fresh('s')), {
      title: 'Old note',
      filesRead: ['a.ts'],
      createdAt: 10_000,
    });
    const stale = await ask(me.token, `project=${encodeURIComponent(key)}&path=a.ts&mtime=10001`);
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe('');
    expect(await (await ask(me.token, `project=${encodeURIComponent(key)}&path=a.ts&mtime=9999`)).text()).toContain(
      'Old note',
    );
  });

  it("does not reveal another team's or a deleted observation of the same path", async () => {
    const { me, ids, key, project } = await setup();
    const gone = await seedObservation(ids, project, await seedSession(ids, project, fresh('s')), {
      title: 'Deleted note',
      filesRead: ['z.ts'],
    });
    await env.DB.prepare('UPDATE observations SET deleted_at = 1 WHERE id = ?').bind(gone).run();
    const other = await newIdentity();
    const otherIds = await idsOf(other);
    const otherProject = await seedProject(otherIds, key);
    await seedObservation(otherIds, otherProject, await seedSession(otherIds, otherProject, fresh('s')), {
      title: 'Foreign note',
      filesRead: ['z.ts'],
    });
    expect(await (await ask(me.token, `project=${encodeURIComponent(key)}&path=z.ts`)).text()).toBe('');
  });

  it('refuses a request without a path', async () => {
    const { me, key } = await setup();
    const res = await ask(me.token, `project=${encodeURIComponent(key)}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_query');
  });
});
