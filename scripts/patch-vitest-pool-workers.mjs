// Patches @cloudflare/vitest-pool-workers so a wrapper class installs its prototype Proxy once (upstream:
// cloudflare/workers-sdk#15092, fixed by PR #15106, not in a release as of 0.23.0). Unpatched,
// `createProxyPrototypeClass` (dist/worker/lib/cloudflare/test-internal.mjs) wraps `Class.prototype` in a new Proxy
// on EVERY construction: the SELF / `exports.default` entrypoint is constructed per request and each Durable Object
// wrapper per instance, so after N of them every property read on the class walks N nested `get` traps. In one
// runtime every request is slower than the one before (isolate: false: 20 health calls took 189 ms after the first
// test file, 1,003 ms after the tenth), which made a shared worker runtime slower than a workerd per file.
//
// Runs as `postinstall`. Idempotent; writes through a temporary file and a rename, so a node_modules hard-linked from
// another checkout gets its own copy of the file instead of changing the other tree's. A release whose code differs
// (the upstream fix, or a rewrite) is left alone with a warning, and vitest.config.ts refuses to share a runtime on a
// pool that still re-wraps.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const POOL_INTERNAL_FILE =
  'node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs';
export const PATCH_MARK = 'cairn: install the prototype proxy once';
const BEFORE = '\tfunction Class(...args) {\n\t\tClass.prototype = new Proxy(Class.prototype, {';
const AFTER =
  `\tlet proxied = false; // ${PATCH_MARK} (workers-sdk#15092)\n` +
  '\tfunction Class(...args) {\n' +
  '\t\tif (proxied) return Reflect.construct(superClass, args, Class);\n' +
  '\t\tproxied = true;\n' +
  '\t\tClass.prototype = new Proxy(Class.prototype, {';

/**
 * The pool's source with the fix applied. `state`: 'patched' (changed now), 'already' (carries the fix), 'unknown'
 * (neither the code this patch expects nor the patch: left as it is).
 * @param {string} text
 * @returns {{ text: string, state: 'patched' | 'already' | 'unknown' }}
 */
export function patchPoolSource(text) {
  if (text.includes(PATCH_MARK)) return { text, state: 'already' };
  if (!text.includes(BEFORE)) return { text, state: 'unknown' };
  return { text: text.replace(BEFORE, AFTER), state: 'patched' };
}

/** True when the pool's wrapper classes re-wrap their prototype on every construction (unpatched, unfixed). */
export function poolRewrapsPrototype(text) {
  return patchPoolSource(text).state === 'patched';
}

function main() {
  const file = join(dirname(fileURLToPath(import.meta.url)), '..', POOL_INTERNAL_FILE);
  // An install without devDependencies (npm install --omit=dev) has no test pool: nothing to patch.
  if (!existsSync(file)) return console.log('vitest-pool-workers: not installed; nothing to patch');
  const { text, state } = patchPoolSource(readFileSync(file, 'utf8'));
  if (state === 'already') return console.log('vitest-pool-workers: already patched');
  if (state === 'unknown')
    return console.warn(`vitest-pool-workers: createProxyPrototypeClass not as expected in ${file}; not patched`);
  const tmp = `${file}.cairn-tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
  console.log('vitest-pool-workers: patched createProxyPrototypeClass (prototype proxy installed once)');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
