// Every subrequest is counted (src/db/meter.ts): a binding that leaves the Worker (Durable Objects, R2, Vectorize,
// Workers AI, static assets) is read only where its metered face is made, and nothing but the meter calls the
// global fetch. A new file reading one of them fails here until it goes through the meter's faces
// (src/db/meter-bindings.ts: countedStub, counted, assets, meteredFetch).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** The source without comments (a comment may name a binding or fetch()). */
const code = (f: string) =>
  readFileSync(f, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

const files = tsFiles(path.join(ROOT, 'src')).map((f) => ({ rel: path.relative(ROOT, f), text: code(f) }));

/** Bindings that reach outside the invocation, and where each is read (its metered face is made there). */
const READERS: Record<string, string[]> = {
  SESSIONS: ['src/session/session-do.ts'],
  TEAMS: ['src/slots/team-do.ts'],
  HUBS: ['src/live/hub-do.ts'],
  LIMITERS: ['src/limits/limiter-do.ts'],
  JOBS: ['src/jobs/job-do.ts'],
  VECTORS: ['src/vectors/adapters.ts'],
  AI: ['src/observer/providers/index.ts', 'src/vectors/adapters.ts'],
  // backup/daily.ts only asks whether a bucket is bound.
  BACKUPS: ['src/backup/daily.ts', 'src/backup/store.ts'],
  ASSETS: ['src/db/meter-bindings.ts'],
};

const reads = (binding: string) => new RegExp(`\\benv\\.${binding}\\b`);
/** A call of the global fetch: `fetch(` not after a dot, on a line that does not declare a method named fetch. */
function callsGlobalFetch(text: string): boolean {
  return text
    .split('\n')
    .some((line) => /(^|[^.\w$])fetch\s*\(/.test(line) && !/^\s*(async\s+)?fetch\s*\([^)]*\)\s*[:{]/.test(line));
}

describe('every subrequest goes through the meter', () => {
  it('reads each binding that leaves the Worker only where its metered face is made', () => {
    const found = Object.fromEntries(
      Object.keys(READERS).map((b) => [b, files.filter((f) => reads(b).test(f.text)).map((f) => f.rel)]),
    );
    expect(found).toEqual(READERS);
  });

  it('makes each Durable Object accessor count its calls', () => {
    for (const b of ['SESSIONS', 'TEAMS', 'HUBS', 'LIMITERS', 'JOBS']) {
      const [file] = READERS[b]!;
      const text = files.find((f) => f.rel === file)!.text;
      expect(text, file).toMatch(/return countedStub\(/);
      expect(text, file).toMatch(/\nmeterDurableObject\(/);
    }
  });

  it('calls the global fetch only in the meter', () => {
    expect(files.filter((f) => callsGlobalFetch(f.text)).map((f) => f.rel)).toEqual(['src/db/meter-bindings.ts']);
  });

  it('would notice a binding read or a fetch where it does not belong (the checks can fail)', () => {
    expect(reads('AI').test('const ai = env.AI;')).toBe(true);
    expect(reads('AI').test('env.AIR')).toBe(false);
    expect(callsGlobalFetch('  const r = await fetch(url);')).toBe(true);
    expect(callsGlobalFetch('return fetch(input, { method: m })')).toBe(true);
    expect(callsGlobalFetch('await stub.fetch(req)')).toBe(false);
    expect(callsGlobalFetch('  fetch(input: string, init: RequestInit): Promise<Response>;')).toBe(false);
  });
});
