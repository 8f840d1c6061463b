// src/db/ is the only door to D1: no feature folder prepares or batches D1 statements or builds drizzle
// queries itself. The one module still on hand-written SQL outside src/db/ is listed here and may only shrink.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** Still talking to D1 directly: the search engine's FTS statements (next to move into src/db/). */
const NOT_YET_MOVED = ['src/search/search.ts'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'client' ? [] : tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.generated.ts') ? [p] : [];
  });
}

const outsideDb = tsFiles(SRC)
  .map((f) => path.relative(ROOT, f))
  .filter((f) => !f.startsWith('src/db/'));
const text = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

describe('the data layer door', () => {
  it('leaves no D1 prepare or batch call outside src/db/ but the listed module', () => {
    const users = outsideDb.filter((f) => /\.(prepare|batch)\s*[(<]/.test(text(f)));
    expect(users.sort()).toEqual(NOT_YET_MOVED);
  });

  it('keeps drizzle itself inside src/db/: feature code calls src/db functions', () => {
    expect(outsideDb.filter((f) => /from ['"]drizzle-orm/.test(text(f)))).toEqual([]);
  });

  it('spells the visibility rule in one place only', () => {
    const rule = /visibility\s*=\s*'team'\s+OR\s+\w*\.?owner_user_id/i;
    const copies = tsFiles(SRC)
      .map((f) => path.relative(ROOT, f))
      .filter((f) => rule.test(text(f)));
    expect(copies).toEqual([]);
    expect(text('src/db/visibility.ts')).toContain("or(eq(p.visibility, 'team'), eq(p.ownerUserId, v.userId))");
  });

  it('leaves the choice of database to src/db/shards.ts: no feature reads a D1 binding (env.DB, env.DB_1, …) itself', () => {
    const binding = /\benv\.DB(_\d+)?\b|\benv\[/;
    expect(outsideDb.filter((f) => binding.test(text(f)))).toEqual([]);
    expect(binding.test('await ensureProject(c.env.DB, auth, key, now)')).toBe(true);
    expect(binding.test('teamDb(this.env, teamId)')).toBe(false);
  });

  it('would notice a D1 call outside src/db/ (the check can fail)', () => {
    expect(/\.(prepare|batch)\s*[(<]/.test("await env.DB.prepare('SELECT 1')")).toBe(true);
  });
});
