// A work counter for regular expressions that cannot flake: V8's own backtrack counter. Every regex run inside
// `withBacktrackBudget` is also run as a probe that V8 stops after `perChar × (length of the text)` backtracks
// (`%NewRegExpWithBacktrackLimit`, a V8 intrinsic reached through --allow-natives-syntax). The probe is the
// pattern with a sentinel alternative, `(?:R)|\uFFFF`, run on the text with the sentinel appended, so it
// always matches unless it was stopped: a null answer means that execution needed more backtracks than the
// budget. A pattern linear in its input stays under a fixed budget per character at any length; a quadratic
// one needs work per character that grows with the length, so on long hostile text it is stopped. Counts, not
// time: the same on a loaded machine as on an idle one.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--allow-natives-syntax');
// Compiled after the flag is set, so the intrinsic parses; nothing else in the process sees the flag's effect.
const limited = new Function(
  'source',
  'flags',
  'limit',
  'return %NewRegExpWithBacktrackLimit(source, flags, limit);',
) as (source: string, flags: string, limit: number) => RegExp;

const SENTINEL = '\uFFFF';

class OverBudget extends Error {}

export interface BudgetReport<T> {
  /** What `fn` returned; undefined when an execution went over the budget (`fn` is stopped there). */
  result: T | undefined;
  /** The execution that needed more than the budget: pattern and text length. */
  over: Array<{ pattern: string; chars: number }>;
  /** How many regex executions were probed (a test can check the harness saw the work at all). */
  probed: number;
  /** The longest text any regex ran on. */
  longest: number;
}

/**
 * Runs `fn` with every `RegExp.prototype.exec` (which `test`, `replace` and `match` call once exec is
 * replaced) probed against the budget. Synchronous only: the original exec is back before this returns.
 */
export function withBacktrackBudget<T>(perChar: number, fn: () => T): BudgetReport<T> {
  const proto = RegExp.prototype;
  const exec = proto.exec;
  const over: BudgetReport<T>['over'] = [];
  let probed = 0;
  let longest = 0;
  const probes = new Map<string, RegExp>();
  let last: { text: string; padded: string } | null = null;
  // No regex may run inside: it would call this exec again.
  proto.exec = function (this: RegExp, text: string) {
    // V8 takes the limit as a 32-bit count.
    const limit = Math.min(2 ** 32 - 1, Math.max(1, perChar * text.length));
    const key = `${this.flags}/${limit}/${this.source}`;
    let probe = probes.get(key);
    if (!probe)
      probes.set(
        key,
        (probe = limited(
          `(?:${this.source})|${SENTINEL}`,
          `${[...this.flags].filter((f) => f !== 'g' && f !== 'y').join('')}g`,
          limit,
        )),
      );
    if (last?.text !== text) last = { text, padded: `${text}${SENTINEL}` };
    probe.lastIndex = this.global || this.sticky ? this.lastIndex : 0;
    probed++;
    longest = Math.max(longest, text.length);
    if (exec.call(probe, last.padded) === null) {
      // Not run for real: a pattern over the budget may take seconds or hours to finish.
      over.push({ pattern: this.source, chars: text.length });
      throw new OverBudget();
    }
    return exec.call(this, text);
  };
  // Optimised regexp code steps back through simple greedy loops without counting a backtrack, which hides
  // exactly the quadratic `^\s*key\s*:` kind of pattern; the probes are compiled without those shortcuts.
  setFlagsFromString('--no-regexp-optimization');
  try {
    return { result: fn(), over, probed, longest };
  } catch (err) {
    if (err instanceof OverBudget) return { result: undefined, over, probed, longest };
    throw err;
  } finally {
    proto.exec = exec;
    setFlagsFromString('--regexp-optimization');
  }
}
