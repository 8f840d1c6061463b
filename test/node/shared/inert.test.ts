// Inert text (src/shared/inert.ts): what every stored string is stripped of at the edge. Checked on what it keeps
// and what it takes out, and on the work it does: every regex run within a fixed number of backtracks per
// character of its input (V8's own counter, hooks-client/test/backtrack-budget.ts), at 32k and 128k characters.
import { describe, expect, it } from 'vitest';
import { inertLine, inertText } from '#shared/inert';
import { withBacktrackBudget } from '../../../hooks-client/test/backtrack-budget';

const ESC = '\u001b';
const BIDI = [
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
];

describe('inert text', () => {
  it('takes out terminal escapes, other controls and every bidi control, and keeps what text needs', () => {
    expect(inertText(`a${ESC}]52;c;aGk=\u0007b`)).toBe('a]52;c;aGk=b');
    expect(inertText(`red ${ESC}[31mx${ESC}[0m`)).toBe('red [31mx[0m');
    expect(inertText(`one\r\ntwo\rthree\u2028four\u2029five`)).toBe('one\ntwo\nthree\nfour\nfive');
    expect(inertText('tab\there\nnext')).toBe('tab\there\nnext');
    expect(inertText(`\u0000\u0008\u000b\u000c\u007f\u0085\u009b`)).toBe('');
    for (const c of BIDI) expect(inertText(`exe${c}.txt`), c.codePointAt(0)!.toString(16)).toBe('exe.txt');
    // Right-to-left letters, joiners (Persian, emoji sequences) and ordinary Unicode stay.
    const kept = 'שלום · می‌خواهم · 👩\u200d💻 · naïve · 日本語';
    expect(inertText(kept)).toBe(kept);
  });

  it('puts a one-line value on one line', () => {
    expect(inertLine(`key\nsecond\tthird\r\nfourth\rfifth\u2028sixth`)).toBe('key second third fourth fifth sixth');
    expect(inertLine(`github.com/acme/${ESC}[2K\u202ewidgets`)).toBe('github.com/acme/[2Kwidgets');
  });

  it('does a fixed amount of work per character, however long or hostile the text', () => {
    for (const n of [32_000, 128_000]) {
      for (const text of [ESC.repeat(n), `\r${'\u202e'.repeat(n)}\n`, 'a\r\n'.repeat(n / 3), 'x'.repeat(n)]) {
        for (const f of [inertText, inertLine]) {
          const run = withBacktrackBudget(4, () => f(text));
          expect(run.over).toEqual([]);
          expect(run.probed).toBeGreaterThan(0);
        }
      }
    }
  });
});
