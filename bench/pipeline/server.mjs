// A throwaway wrangler dev for the pipeline benchmarks: a bundled snapshot of the Worker (so a teammate's save
// cannot restart it mid-run), a fresh local database, the given Worker variables, and a bootstrap token.
// The scripted fake observer (test/support/fake-llm.ts) is bundled with esbuild and run in this process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ROOT } from '../../scripts/dev-server.mjs';
import { startBenchServer } from '../retrieval/harness.mjs';

/** A snapshot wrangler dev with a fresh database and a bootstrap token (see bench/retrieval/harness.mjs); `root` serves another checkout. */
export const startPipelineServer = ({ port, vars = {}, root }) => startBenchServer(port, vars, { root });

/** Starts the scripted fake Messages API on 127.0.0.1 (bundled from the test support file). */
export async function startFakeObserver() {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-fake-llm-'));
  const outfile = path.join(dir, 'fake-llm.mjs');
  await build({
    entryPoints: [path.join(ROOT, 'test', 'support', 'fake-llm.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile,
    logLevel: 'error',
  });
  const { startFakeLlm } = await import(pathToFileURL(outfile).href);
  const fake = await startFakeLlm();
  return {
    url: fake.url,
    async script(id, responses, delayMs = 0) {
      await fetch(`${fake.url}/__scenario/${id}`, { method: 'POST', body: JSON.stringify({ responses, delayMs }) });
    },
    async requests(id) {
      return (await (await fetch(`${fake.url}/__scenario/${id}`)).json()).requests;
    },
    async close() {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
