// The wrangler configs derived from wrangler.toml: `npm start`'s drops what only works on Cloudflare; the vitest
// pool's keeps every binding (tests stub env.AI and env.VECTORS) but marks those two remote, which without a remote
// proxy only silences wrangler's warnings about them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { localWranglerToml, poolWranglerConfig, ROOT } from '../../../scripts/dev-server.mjs';

const ORIGINAL = readFileSync(`${ROOT}/wrangler.toml`, 'utf8');
const tables = (toml: string) => toml.split('\n').filter((l) => /^\[/.test(l.trim()));
/** The lines of one table (header to next header). */
function table(toml: string, header: string): string[] {
  const lines = toml.split('\n');
  const start = lines.findIndex((l) => l.trim() === header);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && /^\[/.test(l.trim()));
  return lines.slice(start + 1, end < 0 ? undefined : end).filter((l) => l.trim() && !l.trim().startsWith('#'));
}

describe('wrangler configs for local runs', () => {
  it('local mode drops Workers AI, Vectorize and the cron trigger and makes paths absolute', () => {
    const toml = localWranglerToml(ORIGINAL, {
      main: '/x/index.js',
      migrationsDir: '/x/migrations',
      assetsDir: '/x/assets',
    });
    expect(tables(toml)).not.toContain('[ai]');
    expect(tables(toml)).not.toContain('[[vectorize]]');
    expect(tables(toml)).not.toContain('[triggers]');
    expect(toml).toMatch(/^main = "\/x\/index.js"$/m);
  });

  it('the vitest pool keeps every table and binding, marking only Workers AI and Vectorize remote', () => {
    const toml = readFileSync(poolWranglerConfig(), 'utf8');
    expect(tables(toml)).toEqual(tables(ORIGINAL));
    expect(table(toml, '[ai]')).toEqual(['remote = true', ...table(ORIGINAL, '[ai]')]);
    expect(table(toml, '[[vectorize]]')).toEqual(['remote = true', ...table(ORIGINAL, '[[vectorize]]')]);
    expect(toml.match(/^remote = true$/gm)).toHaveLength(2);
    expect(toml.split('\n')).toContain(`main = "${ROOT}/src/index.ts"`);
  });
});
