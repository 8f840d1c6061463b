// The pure transforms every event goes through, on hostile input: tag stripping, cut-first cleaning,
// globs and JSON shape are linear (answers checked here; timings with generous bounds, real numbers in bench/).
import { describe, expect, it } from 'vitest';
import { isPathExcluded } from '#shared/glob';
import { measureJson } from '#shared/json-shape';
import { isFullyPrivate, stripMemoryTags, stripTagBlocks } from '#shared/tags';
import { cleanField, FIELD_MAX_CHARS } from '#shared/truncate';

// The backtracking pattern the stripper replaced: identical answers wherever every block is closed.
const REFERENCE = /<(private|cairn-context|system-reminder|system_instruction|system-instruction|persisted-output)(?=[\s/>])[^>]*>[\s\S]*?<\/\1\s*>/gi;

function seeded(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const timed = <T>(run: () => T): { value: T; ms: number } => {
  const t0 = performance.now();
  const value = run();
  return { value, ms: performance.now() - t0 };
};

describe('memory-tag stripping in one pass', () => {
  it('answers like the old pattern on 20,000 seeded mixes of tags whose blocks all close', () => {
    const parts = ['<private>', '</private>', '<PRIVATE a="1">', '</private >', '<cairn-context>', '</cairn-context>', '<private-notes>', '<', '>', 'x', '\n', '</', '<system-reminder/>', '</system-reminder>'];
    const rnd = seeded(14);
    let compared = 0;
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let k = Math.floor(rnd() * 10); k > 0; k--) text += parts[Math.floor(rnd() * parts.length)];
      const reference = text.replace(REFERENCE, '');
      // Where the old pattern left an opening tag unclosed, the new rule hides the rest instead.
      if (stripTagBlocks(text, { unclosedToEnd: false }) !== reference) throw new Error(`differs on ${JSON.stringify(text)}`);
      compared++;
    }
    expect(compared).toBe(20_000);
  });

  it('hides everything after an opening tag that is never closed', () => {
    expect(stripMemoryTags('keep this <private>forgot to close it')).toBe('keep this');
    expect(isFullyPrivate('<private>all of it, unclosed')).toBe(true);
    expect(stripMemoryTags('a < b and <div>not ours</div>')).toBe('a < b and <div>not ours</div>');
  });

  it('strips 1 MB of opening tags, of unclosed tags and of stray closers within a generous bound', () => {
    for (const unit of ['<private>', '<private ', '<private></private', '</private>', '<private><cairn-context>', '<']) {
      const text = `${unit.repeat(Math.ceil(1_000_000 / unit.length))}SECRET>`;
      const { value, ms } = timed(() => stripTagBlocks(text, { closedFromStart: true }));
      expect(ms, unit).toBeLessThan(2_000);
      if (unit.startsWith('<private')) expect(value, unit).not.toContain('SECRET');
    }
  });
});

describe('10× the body limit of worst-case characters', () => {
  it('cleans and checks 10 MB of opening tags within a generous bound', () => {
    const text = `${'<private>'.repeat(1_111_112)}SECRET`;
    const { value, ms } = timed(() => [cleanField(text), isFullyPrivate(text)] as const);
    expect(value[0]).not.toContain('SECRET');
    expect(value[1]).toBe(true);
    expect(ms).toBeLessThan(5_000);
  });
});

describe('cleanField: cut first, then strip', () => {
  it('hides a private block that the cut splits, on both sides of the cut', () => {
    const text = `public head ${'h'.repeat(9_000)}<private>${'s'.repeat(100_000)}</private>${'t'.repeat(3_000)} public tail`;
    const out = cleanField(text);
    expect(out.length).toBeLessThanOrEqual(FIELD_MAX_CHARS);
    expect(out.startsWith('public head')).toBe(true);
    expect(out.endsWith('public tail')).toBe(true);
    expect(out).not.toContain('sss');
    expect(out).toMatch(/<elided chars="\d+"/);
  });

  it('cleans a short field like stripMemoryTags', () => {
    expect(cleanField('  a <private>b</private> c  ')).toBe('a  c');
  });
});

describe('globs as an automaton', () => {
  it('answers **a**a**a**b and 200 star-heavy globs against a 4,000-char path within a generous bound', () => {
    const path = `/${'a'.repeat(3_999)}`;
    const globs = ['**a**a**a**b', ...Array.from({ length: 200 }, (_, i) => `/x${i}/${'*a'.repeat(240)}`)];
    const { value, ms } = timed(() => isPathExcluded(path, globs, '/home/dev'));
    expect(value).toBe(false);
    expect(isPathExcluded(`${path}b`, ['**a**a**a**b'])).toBe(true);
    expect(ms).toBeLessThan(2_000);
  });
});

describe('JSON shape', () => {
  it('measures depth and values without recursion and ignores brackets inside strings', () => {
    expect(measureJson('{"a":[1,2,{"b":"[[[["}]}')).toEqual({ depth: 3, values: 3 });
    expect(measureJson(`${'['.repeat(50_000)}${']'.repeat(50_000)}`).depth).toBe(65);
    expect(measureJson(`[${'0,'.repeat(200_000)}0]`).values).toBe(100_001);
  });
});
