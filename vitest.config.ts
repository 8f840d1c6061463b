// Three projects: Worker code runs inside workerd (real D1, Durable Objects, FTS5), most files sharing a runtime
// (`worker`), a few in one of their own (`worker-fresh`); Node-side code (hooks client, fake servers, scripts) runs
// in plain Node (`node`). Two files run at once. Tiers: `npm test` leaves out `*.slow.test.ts` (long by design: every
// arrival order, the fuzz deadline, kills and restarts of a server, the quickstart); `npm run test:slow` runs only
// those, one at a time, and .ci/run runs both. `npx vitest run <file>` runs any single file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
// @ts-expect-error plain ESM script without types
import { poolWranglerConfig } from './scripts/dev-server.mjs';
// @ts-expect-error plain ESM script without types
import { POOL_INTERNAL_FILE, poolRewrapsPrototype } from './scripts/patch-vitest-pool-workers.mjs';
import { startFakeLlm } from './test/support/fake-llm';
import { embedderHandler } from './scripts/sentence-embedder.mjs';
import { schemaDdlHandler } from './test/support/schema-ddl';

process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_SEND_METRICS ??= 'false';

/**
 * Every import specifier of a runtime dependency (package.json `dependencies`) that the Worker's code or the worker
 * tests name, e.g. 'hono', 'hono/timing', 'drizzle-orm/d1'. The worker project pre-bundles exactly these (vite's
 * dependency optimizer): each test file starts its own workerd and imports src/index through vite's module
 * runner one module at a time, ~800 modules of which ~570 are the dependencies'; bundled, those are ~27, and the
 * import a file waits for went from ~5.6 s to ~3.1 s (measured 2026-12-03). Read from the sources rather than
 * listed by hand, so a new subpath import is bundled too and never loads a second, unbundled copy of a package
 * beside the bundled one.
 */
function workerDependencyImports(): string[] {
  const deps = Object.keys(
    (JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> }).dependencies,
  );
  const found = new Set<string>();
  for (const dir of ['src', 'test/worker']) {
    for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts')) continue;
      const text = readFileSync(join(dir, name), 'utf8');
      for (const m of text.matchAll(/(?:from|import\()\s*'([^'.#][^']*)'/g)) {
        const spec = m[1];
        if (deps.some((d) => spec === d || spec.startsWith(`${d}/`))) found.add(spec);
      }
    }
  }
  return [...found].sort();
}

/**
 * Worker files that each need a workerd of their own. The other worker files share their vitest worker's workerd
 * (isolate: false; two vitest workers, so two runtimes at most): a file's start (workerd, socket, importing src/index,
 * migrations) is paid once a runtime instead of once a file, and the files see each other's rows and Durable Objects,
 * which they already tolerate (fresh names, `fresh()`). Five of these drop and rebuild
 * the databases (resetDatabases), so ids start again from 1 while the shared isolate still holds memos keyed by the
 * old ids (shard memo, token memo), and they count job-lane rows that earlier files' upgrades left in the shared
 * JobDO; daily-fanout runs the daily dispatcher, which visits every team the database holds (in a shared runtime,
 * every earlier file's too). Slow tests keep their own runtime as before.
 */
const FRESH_RUNTIME_FILES = [
  'test/worker/upgrade/upgrade.test.ts',
  'test/worker/upgrade/upgrade-held.test.ts',
  'test/worker/backup/backup-restore.test.ts',
  'test/worker/backup/backup-history.test.ts',
  'test/worker/maintenance/daily-fanout.test.ts',
  'test/worker/upgrade/reader-role.test.ts',
];
/** The slow tier's worker files: a workerd each, like the files above, and the Paid plan (see workerProject). */
const SLOW_WORKER_FILES = ['test/worker/**/*.slow.test.ts'];

/**
 * Every other worker file, listed (an `exclude` in the project would replace the command line's, which keeps
 * the slow tests out of `npm test`).
 */
function sharedRuntimeFiles(): string[] {
  return readdirSync('test/worker', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts') && !name.endsWith('.slow.test.ts'))
    .map((name) => `test/worker/${name.replaceAll('\\', '/')}`)
    .filter((file) => !FRESH_RUNTIME_FILES.includes(file))
    .sort();
}

/**
 * Shared runtimes need @cloudflare/vitest-pool-workers patched (scripts/patch-vitest-pool-workers.mjs, run by npm
 * install): unpatched, every request through `exports.default` / SELF and every new Durable Object deepens a chain of
 * Proxies, so a shared workerd slows down with every request it has served (workers-sdk#15092).
 */
function assertPoolPatched(): void {
  if (poolRewrapsPrototype(readFileSync(POOL_INTERNAL_FILE, 'utf8')))
    throw new Error(
      `${POOL_INTERNAL_FILE} is not patched: run node scripts/patch-vitest-pool-workers.mjs (npm install does)`,
    );
}

export default defineConfig(async () => {
  assertPoolPatched();
  const migrations = await readD1Migrations('migrations');
  // Worker tests observe through the real Anthropic SDK, answered by a scripted fake on 127.0.0.1.
  const fakeLlm = await startFakeLlm();
  /**
   * The worker project's settings: `name`, which files, whether each file gets its own workerd, and the Workers plan
   * whose per-invocation budget the meter refuses to pass (src/db/meter.ts, test/worker/limits.ts). `npm test` runs
   * under Free (50 subrequests an invocation, D1 statements included; job steps sized to it), so every path a Free
   * deployment can use must fit it; the few whole-team operations that do not yet are exempted in the code, by
   * issue, up to Paid's 1,000. The slow tier runs under Paid: its jobs at 100k records measure Paid's step budget.
   */
  const workerProject = (name: string, include: string[], isolate: boolean, plan: 'free' | 'paid') => ({
    plugins: [
      cloudflareTest({
        remoteBindings: false,
        // wrangler.toml with Workers AI and Vectorize marked remote: the tests stub both, so wrangler's
        // warnings about serving them locally say nothing (see poolWranglerConfig).
        wrangler: { configPath: poolWranglerConfig() },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            CAIRN_LOCAL: '1',
            CAIRN_ADMIN_SECRET: 'test-admin-secret',
            OBSERVER_PROVIDER: 'anthropic',
            ANTHROPIC_API_KEY: 'test-anthropic-key',
            ANTHROPIC_BASE_URL: fakeLlm.url,
            OPENAI_BASE_URL: `${fakeLlm.url}/v1`,
            OPENAI_API_KEY: 'test-openai-key',
            FAKE_LLM_URL: fakeLlm.url,
            // Longer than any test: retention tests move the session's end back instead of waiting.
            SESSION_RETENTION_SECONDS: '600',
            CAIRN_PLAN: plan,
            // Tests only: the subrequest past an invocation's budget throws instead of being counted and logged.
            CAIRN_METER: 'refuse',
          },
          // The sentence model, run in this Node process and loaded on first use. Only tests that build its
          // adapter on this binding use it; every other test keeps the offline embedder (keyword search).
          serviceBindings: {
            EMBEDDER: { node: embedderHandler },
            // The DDL drizzle-kit derives from src/db/schema.ts, for the test that compares it with the
            // migrations: computed when that test asks, not at every config load (a ~4 s schema diff).
            SCHEMA_DDL: { node: schemaDdlHandler },
          },
          // The backup bucket (src/backup/), as an operator binds it in wrangler.toml: miniflare's local R2.
          r2Buckets: ['BACKUPS'],
        },
      }),
    ],
    test: {
      name,
      include,
      isolate,
      setupFiles: ['./test/worker/apply-migrations.ts', './test/worker/limits.ts'],
      // Generous: no test asserts time, and a loaded 2-core machine must not turn slowness into failures.
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // The runtime dependencies as a few pre-bundled modules instead of hundreds (workerDependencyImports).
      deps: { optimizer: { ssr: { enabled: true, include: workerDependencyImports() } } },
    },
  });
  return {
    test: {
      // Two files at once on every machine (vitest's default on 2 cores is one: CPUs − 1). Measured on this 2-core
      // machine: npm test 194 s with two (2026-12-03). The node files mostly wait on child processes
      // and browsers, and each vitest worker keeps its own shared workerd for the `worker` files.
      maxWorkers: 2,
      projects: [
        // Most worker files share their vitest worker's workerd (see FRESH_RUNTIME_FILES); the rest get one each.
        workerProject('worker', sharedRuntimeFiles(), false, 'free'),
        workerProject('worker-fresh', FRESH_RUNTIME_FILES, true, 'free'),
        workerProject('worker-slow', SLOW_WORKER_FILES, true, 'paid'),
        {
          test: {
            name: 'node',
            environment: 'node',
            globalSetup: ['./test/node/global-setup.ts'],
            // test/unit: the Worker's pure modules (parsing, policy, ranking), which need neither workerd nor D1.
            include: ['test/node/**/*.test.ts', 'test/unit/**/*.test.ts', 'hooks-client/test/**/*.test.ts'],
            testTimeout: 60_000,
            hookTimeout: 120_000,
            // expect.poll's 1 s default is shorter than a browser page's answer on a loaded 2-core machine.
            expect: { poll: { timeout: 20_000 } },
          },
        },
      ],
    },
  };
});
