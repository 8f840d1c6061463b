// The pure transforms every event goes through, on hostile input: tag stripping, cut-first cleaning, globs and
// JSON shape. Answers are checked, and so is the work: how many characters a scanner examines per character of
// its input (test/support/scan-count.ts), a count that is the same on a loaded machine. Speed is in bench/.
import { describe, expect, it } from 'vitest';
import { isPathExcluded } from '#shared/glob';
import { measureJson } from '#shared/json-shape';
import { isFullyPrivate, stripMemoryTags, stripTagBlocks } from '#shared/tags';
import { cleanField, FIELD_MAX_CHARS } from '#shared/truncate';
import { countScans } from '../../support/scan-count';

// The backtracking pattern the stripper replaced: identical answers wherever every block is closed.
const REFERENCE =
  /<(private|cairn-context|system-reminder|system_instruction|system-instruction|persisted-output)(?=[\s/>])[^>]*>[\s\S]*?<\/\1\s*>/gi;

/**
 * Characters a linear scanner may examine per character of its input. Measured at most 8 on these inputs: a
 * text that starts inside a block is swept once for the closer of each of the six tag names.
 */
const PER_CHAR = 12;

function seeded(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** The kind of stripper the one-pass one replaced: every unclosed opening tag searches the rest of the text. */
function naiveStrip(text: string): string {
  let out = text;
  for (let i = out.indexOf('<private>'); i >= 0; i = out.indexOf('<private>', i + 1)) {
    const close = out.indexOf('</private>', i);
    if (close >= 0) out = out.slice(0, i) + out.slice(close + '</private>'.length);
  }
  return out;
}

describe('the scan counter', () => {
  it('finds work per character growing with the length in a quadratic stripper, and fixed in the one-pass one', () => {
    const perChar = (strip: (t: string) => string, n: number) => {
      const text = '<private>'.repeat(n);
      return countScans(() => strip(text)).work / text.length;
    };
    expect(perChar(naiveStrip, 4_000)).toBeGreaterThan(5 * perChar(naiveStrip, 400));
    expect(perChar(naiveStrip, 4_000)).toBeGreaterThan(PER_CHAR);
    const oneLong = perChar((t) => stripTagBlocks(t), 40_000);
    const oneShort = perChar((t) => stripTagBlocks(t), 400);
    expect(oneLong).toBeGreaterThanOrEqual(1);
    expect(oneLong).toBeLessThanOrEqual(PER_CHAR);
    expect(oneLong).toBeLessThanOrEqual(oneShort * 1.5);
  });
});

describe('memory-tag stripping in one pass', () => {
  it('answers like the old pattern on 20,000 seeded mixes of tags whose blocks all close', () => {
    const parts = [
      '<private>',
      '</private>',
      '<PRIVATE a="1">',
      '</private >',
      '<cairn-context>',
      '</cairn-context>',
      '<private-notes>',
      '<',
      '>',
      'x',
      '\n',
      '</',
      '<system-reminder/>',
      '</system-reminder>',
    ];
    const rnd = seeded(14);
    let compared = 0;
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let k = Math.floor(rnd() * 10); k > 0; k--) text += parts[Math.floor(rnd() * parts.length)];
      const reference = text.replace(REFERENCE, '');
      // Where the old pattern left an opening tag unclosed, the new rule hides the rest instead.
      if (stripTagBlocks(text, { unclosedToEnd: false }) !== reference)
        throw new Error(`differs on ${JSON.stringify(text)}`);
      compared++;
    }
    expect(compared).toBe(20_000);
  });

  it('hides everything after an opening tag that is never closed', () => {
    expect(stripMemoryTags('keep this <private>forgot to close it')).toBe('keep this');
    expect(isFullyPrivate('<private>all of it, unclosed')).toBe(true);
    expect(stripMemoryTags('a < b and <div>not ours</div>')).toBe('a < b and <div>not ours</div>');
  });

  it('strips 1 MB of opening tags, of unclosed tags and of stray closers examining a fixed number of characters per character', () => {
    for (const unit of [
      '<private>',
      '<private ',
      '<private></private',
      '</private>',
      '<private><cairn-context>',
      '<',
    ]) {
      const text = `${unit.repeat(Math.ceil(1_000_000 / unit.length))}SECRET>`;
      for (const opts of [{ closedFromStart: true }, { unclosedToEnd: false }, {}]) {
        const { value, work } = countScans(() => stripTagBlocks(text, opts));
        expect(work / text.length, `${unit} ${JSON.stringify(opts)}`).toBeLessThanOrEqual(PER_CHAR);
        if (unit.startsWith('<private') && opts.unclosedToEnd !== false) expect(value, unit).not.toContain('SECRET');
      }
    }
  });
});

describe('10× the body limit of worst-case characters', () => {
  it('cleans 10 MB of opening tags examining no more than the field budget, and checks it in one pass', () => {
    const text = `${'<private>'.repeat(1_111_112)}SECRET`;
    const cleaned = countScans(() => cleanField(text));
    expect(cleaned.value).not.toContain('SECRET');
    // Cut first: the work is bounded by what is kept, however large the input.
    expect(cleaned.work).toBeLessThanOrEqual(PER_CHAR * FIELD_MAX_CHARS);
    const checked = countScans(() => isFullyPrivate(text));
    expect(checked.value).toBe(true);
    expect(checked.work / text.length).toBeLessThanOrEqual(PER_CHAR);
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
  it('answers **a**a**a**b and 200 star-heavy globs against a 4,000-char path reading each character once per glob', () => {
    const path = `/${'a'.repeat(3_999)}`;
    const globs = ['**a**a**a**b', ...Array.from({ length: 200 }, (_, i) => `/x${i}/${'*a'.repeat(240)}`)];
    const { value, work } = countScans(() => isPathExcluded(path, globs, '/home/dev'));
    expect(value).toBe(false);
    expect(isPathExcluded(`${path}b`, ['**a**a**a**b'])).toBe(true);
    // The path and its last segment, each read at most once by each glob (a backtracking matcher rereads them).
    expect(work).toBeGreaterThanOrEqual(path.length);
    expect(work).toBeLessThanOrEqual(globs.length * (path.length + path.length - 1));
  });
});

describe('JSON shape', () => {
  it('measures depth and values without recursion and ignores brackets inside strings', () => {
    expect(measureJson('{"a":[1,2,{"b":"[[[["}]}')).toEqual({ depth: 3, values: 3 });
    expect(measureJson(`${'['.repeat(50_000)}${']'.repeat(50_000)}`).depth).toBe(65);
    expect(measureJson(`[${'0,'.repeat(200_000)}0]`).values).toBe(100_001);
  });
});
