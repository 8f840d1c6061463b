// The seeded part of the transfer fuzz (issue 27): a few dozen import parts, export parameters and move requests
// (transfer-fuzz.ts), ~30 s, so in the slow tier beside the long run (fuzz.slow.test.ts). No 5xx, a stable
// snake_case code for every refusal, and nothing stored harmed: another team's rows, a teammate's and the
// importer's earlier ones are read from both databases before and after, and no row names another team's
// project or session.
import { describe, expect, it } from 'vitest';
import { fresh } from '../support/http';
import { importNow } from '../support/import';
import { newOwner } from '../teams/support';
import {
  exportRounds,
  importRounds,
  invariantBreaks,
  makeWorld,
  moveRounds,
  protectedRows,
  rngFrom,
  type Failure,
} from './transfer-fuzz';

const SEED = Number((globalThis as { process?: { env?: Record<string, string> } }).process?.env?.FUZZ_SEED ?? 20261202);

describe('fuzzing import, move and export', { timeout: 180_000 }, () => {
  it('answers mutated import parts, export parameters and move requests under 500 with stable codes, and harms nothing stored', async () => {
    const r = rngFrom(SEED);
    const w = await makeWorld();
    const before = await protectedRows(w);
    const failures: Failure[] = [];
    await importRounds(r, w, 30, failures);
    await exportRounds(r, w, 12, failures);
    const where = { shard: 'DB' as 'DB' | 'DB_1' };
    await moveRounds(r, w, 12, failures, where);
    await importRounds(r, w, 8, failures);
    if (failures.length) console.error(`transfer fuzz seed ${SEED}:`, failures.slice(0, 20));
    expect(failures, `seed ${SEED}`).toEqual([]);
    expect(await invariantBreaks(w)).toEqual([]);
    expect(await protectedRows(w)).toEqual(before);
    expect(where.shard).toBe('DB_1');
  });
});

describe('findings of the transfer fuzz', () => {
  it('imports a project key with a lone surrogate half once: the same part again adds no second project', async () => {
    const a = await newOwner();
    const key = `github.com/a/${fresh('k')}\udfff`;
    const body = JSON.stringify({ kind: 'project', key, visibility: 'team', owner: null, created_at: 1 });
    const send = () => importNow(a.token, body);
    const first = (await (await send()).json()) as { imported: { projects: number } };
    const second = (await (await send()).json()) as { imported: { projects: number } };
    expect([first.imported.projects, second.imported.projects]).toEqual([1, 0]);
  });
});
