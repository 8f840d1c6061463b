// Synthetic but plausible observations for the latency benchmark (deterministic for a given seed).
import { rng } from './harness.mjs';

const MODULES = [
  'auth',
  'billing',
  'cart',
  'checkout',
  'search',
  'orders',
  'inventory',
  'shipping',
  'email',
  'reports',
  'admin',
  'profile',
  'api',
  'db',
  'cache',
  'queue',
  'deploy',
  'ci',
  'ui',
  'i18n',
];
const THINGS = [
  'token refresh',
  'session cookie',
  'webhook handler',
  'retry policy',
  'connection pool',
  'price rounding',
  'cache key',
  'pagination cursor',
  'rate limiter',
  'migration script',
  'feature flag',
  'error boundary',
  'date parsing',
  'csv export',
  'image upload',
  'search index',
  'job scheduler',
  'config loader',
  'health check',
  'audit log',
];
const VERBS = [
  'Fixed',
  'Added',
  'Refactored',
  'Investigated',
  'Documented',
  'Removed',
  'Sped up',
  'Hardened',
  'Renamed',
  'Split',
];
const PROBLEMS = [
  'timed out under load',
  'returned stale data',
  'threw on empty input',
  'leaked memory',
  'double-counted retries',
  'ignored the time zone',
  'broke on unicode names',
  'raced with the cancel path',
  'logged secrets',
  'was never invalidated',
];
const CAUSES = [
  'a missing index',
  'an unawaited promise',
  'a wrong default',
  'an off-by-one in the loop',
  'a shared mutable cache',
  'the proxy body limit',
  'an expired certificate',
  'a stale lockfile',
  'a swallowed exception',
  'clock skew between hosts',
];
const TYPES = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision'];
const CONCEPTS = [
  'how-it-works',
  'why-it-exists',
  'what-changed',
  'problem-solution',
  'gotcha',
  'pattern',
  'trade-off',
];
const EXT = ['ts', 'tsx', 'sql', 'ts', 'ts'];

/** The file pool of one project: 60 paths. */
export function projectFiles(p) {
  const r = rng(1000 + p);
  return Array.from({ length: 60 }, (_, i) => {
    const m = MODULES[Math.floor(r() * MODULES.length)];
    return `src/${m}/${m}-${i}.${EXT[i % EXT.length]}`;
  });
}

/** `count` observations of project `p`, starting at sequence `from`, spread over the 180 days before `end`. */
export function observationsFor(p, from, count, end) {
  const r = rng(p * 1_000_003 + from);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const files = projectFiles(p);
  return Array.from({ length: count }, () => {
    const m = pick(MODULES);
    const thing = pick(THINGS);
    const problem = pick(PROBLEMS);
    const cause = pick(CAUSES);
    const touched = Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(files));
    // A code symbol shared by few rows, like the function names and error codes people search for.
    const symbol = `${thing.replace(/ (\w)/g, (_, c) => c.toUpperCase()).replace(/ /g, '')}${Math.floor(r() * 2000)}`;
    return {
      type: pick(TYPES),
      title: `${pick(VERBS)} ${thing} in ${m}: ${problem}`,
      subtitle: `${m} ${thing}`,
      narrative: `The ${thing} in the ${m} module ${problem}. Root cause was ${cause} in ${symbol}(). We changed ${touched[0]} and added a regression test; ${pick(THINGS)} was checked too.`,
      facts: [`${thing} ${problem} because of ${cause}`, `touches ${touched.join(', ')}`],
      symbol,
      concepts: [pick(CONCEPTS), pick(CONCEPTS)].filter((c, i, a) => a.indexOf(c) === i),
      files_read: touched.slice(1),
      files_modified: touched.slice(0, 1),
      created_at: end - Math.floor(r() * 180 * 86_400_000),
    };
  });
}

export const QUERIES = [
  'token refresh timed out',
  'connection pool',
  'stale cache key',
  'webhook retry',
  'csv export unicode',
  'migration index',
  'rate limiter',
  'time zone date parsing',
  'memory leak',
  'feature flag default',
  'audit log secrets',
  'health check proxy',
];
