// Evidence through export and import (issue 34): an observation line carries its files' evidence ids (`file_ids`),
// so a record imported into another team is judged there as it is at home, not `unknown`; a line from before the
// field still imports; a bad `file_ids` refuses the file and stores nothing.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { canonicalEntries, evidenceKey, fileEntry, fileKey, type CheckoutEntries } from '../../../src/shared/evidence';
import { sha256Hex } from '../../../src/lib/crypto';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { importNow } from '../support/import';
import { idsOf, seedProject, seedSession } from '../support/seed';
import { blob, seedCited, ws } from '../evidence/support';

const T0 = Date.parse('2026-06-01T09:00:00Z');
const A = blob('a');
const B = blob('b');
const BASE = blob('c');

/** Two cited records of a fresh project: one on a file still at A (current), one on a file since changed. */
async function cited() {
  const me = await newIdentity();
  const ids = await idsOf(me);
  const key = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, key);
  const session = await seedSession(ids, projectId, fresh('s'), T0);
  await seedCited(ids, projectId, session, {
    title: 'Okapi colours live in the theme',
    files: [{ path: 'src/theme.ts', blob: A, ws: ws('1'), kind: 'read' }],
    createdAt: T0 + 60_000,
  });
  await seedCited(ids, projectId, session, {
    title: 'Okapi renderer calls paintOkapi first',
    files: [{ path: 'src/render.ts', blob: A, ws: ws('2'), base: BASE, kind: 'modified' }],
    createdAt: T0 + 2 * 60_000,
  });
  return { me, key };
}

const CHECKOUT: CheckoutEntries = {
  [fileKey('src/theme.ts')]: fileEntry({ blob: A, missing: [] }),
  [fileKey('src/render.ts')]: fileEntry({ blob: B, missing: [evidenceKey('paintOkapi')] }),
};

/** Each record's evidence by title, as search gives it to `me` after reporting CHECKOUT. */
async function judged(me: TestIdentity, key: string): Promise<Record<string, string | undefined>> {
  const digest = await sha256Hex(canonicalEntries(CHECKOUT));
  const r = await call('/api/context', {
    token: me.token,
    json: { project: key, checkout: { digest, set: CHECKOUT } },
  });
  expect(r.status).toBe(200);
  const res = await call(`/api/search?q=okapi&project=${encodeURIComponent(key)}`, { token: me.token });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { results: { title: string; evidence?: { value: string } }[] };
  return Object.fromEntries(body.results.map((x) => [x.title, x.evidence?.value]));
}

/** The team's file rows with their ids, by path and kind. */
async function fileRows(teamId: number) {
  const { results } = await env.DB.prepare(
    'SELECT path, kind, blob, ws, base FROM observation_files WHERE team_id = ? ORDER BY path, kind',
  )
    .bind(teamId)
    .all();
  return results;
}

const count = async (teamId: number) =>
  (await env.DB.prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
    .bind(teamId)
    .first<{ n: number }>())!.n;

async function exported(me: TestIdentity, key: string): Promise<string[]> {
  const res = await call(`/api/admin/export?project=${encodeURIComponent(key)}`, { token: me.token });
  expect(res.status).toBe(200);
  return (await res.text()).trim().split('\n');
}

describe('evidence through export and import', { timeout: 60_000 }, () => {
  it('judges an imported record in another team as at home, its file rows holding the same ids', async () => {
    const a = await cited();
    const lines = await exported(a.me, a.key);
    const obs = lines
      .map((l) => JSON.parse(l) as { kind: string; file_ids?: unknown })
      .filter((r) => r.kind === 'observation');
    expect(obs.map((o) => o.file_ids)).toEqual(
      expect.arrayContaining([
        { 'src/theme.ts': { blob: A, ws: ws('1'), base: null } },
        { 'src/render.ts': { blob: A, ws: ws('2'), base: BASE } },
      ]),
    );
    const home = await judged(a.me, a.key);
    expect(home).toEqual({
      'Okapi colours live in the theme': 'current',
      'Okapi renderer calls paintOkapi first': 'changed',
    });

    const b = await newIdentity();
    expect((await importNow(b.token, lines.join('\n'))).status).toBe(200);
    expect(await judged(b, a.key)).toEqual(home);
    expect(await fileRows((await idsOf(b)).teamId)).toEqual(await fileRows((await idsOf(a.me)).teamId));
  });

  it('imports an observation line written before file_ids, its file rows without ids', async () => {
    const a = await cited();
    const lines = (await exported(a.me, a.key)).map((l) => {
      const r = JSON.parse(l) as Record<string, unknown>;
      delete r.file_ids;
      return JSON.stringify(r);
    });
    const b = await newIdentity();
    expect((await importNow(b.token, lines.join('\n'))).status).toBe(200);
    const { teamId } = await idsOf(b);
    expect(await count(teamId)).toBe(2);
    expect(await fileRows(teamId)).toEqual([
      { path: 'src/render.ts', kind: 'modified', blob: null, ws: null, base: null },
      { path: 'src/theme.ts', kind: 'read', blob: null, ws: null, base: null },
    ]);
  });

  it.each([
    ['an id that is not hex', { 'src/theme.ts': { blob: 'not-a-blob', ws: null, base: null } }],
    ['a whitespace id of the wrong length', { 'src/theme.ts': { blob: null, ws: A, base: null } }],
    ['an unknown id field', { 'src/theme.ts': { blob: A, ws: null, base: null, tree: A } }],
    ['a missing id field', { 'src/theme.ts': { blob: A, ws: null } }],
    [
      'more entries than the record has files',
      { 'src/theme.ts': { blob: A, ws: null, base: null }, 'x.ts': { blob: A, ws: null, base: null } },
    ],
    ['a path longer than a files list allows', { ['p'.repeat(4_001)]: { blob: A, ws: null, base: null } }],
    ['not an object', ['src/theme.ts']],
  ])('refuses a file whose file_ids has %s with 400 invalid_record, storing nothing', async (_, bad) => {
    const a = await cited();
    const lines = (await exported(a.me, a.key)).map((l) => {
      const r = JSON.parse(l) as Record<string, unknown>;
      if (r.kind === 'observation' && (r.files_read as string[]).includes('src/theme.ts')) r.file_ids = bad;
      return JSON.stringify(r);
    });
    const b = await newIdentity();
    const res = await importNow(b.token, lines.join('\n'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_record');
    const { teamId } = await idsOf(b);
    expect(await count(teamId)).toBe(0);
    expect(await fileRows(teamId)).toEqual([]);
  });
});
