// A throwaway wrangler dev for the pipeline benchmarks: a bundled snapshot of the Worker (so a teammate's save
// cannot restart it mid-run), a fresh local database, the given Worker variables, and a bootstrap token.
// The scripted fake observer (test/support/fake-llm.ts) is bundled with esbuild and run in this process.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { QUIET_ENV, ROOT, mintDevToken } from '../../scripts/dev-server.mjs';

const WRANGLER = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

function wrangler(args, cwd) {
  const r = spawnSync(process.execPath, [WRANGLER, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...QUIET_ENV } });
  if (r.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
}

/** @param {{port: number, vars?: Record<string,string>}} opts */
export async function startPipelineServer({ port, vars = {} }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pipeline-bench-'));
  wrangler(['deploy', '--dry-run', '--outdir', path.join(dir, 'dist')], ROOT);
  const toml = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/^main = .*$/m, 'main = "dist/index.js"')
    .replace(/^migrations_dir = .*$/m, `migrations_dir = ${JSON.stringify(path.join(ROOT, 'migrations'))}`);
  writeFileSync(path.join(dir, 'wrangler.toml'), toml);
  const persist = path.join(dir, 'state');
  wrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persist], dir);
  const secret = `bench-${Math.random().toString(36).slice(2)}`;
  const allVars = { CAIRN_LOCAL: '1', CAIRN_ADMIN_SECRET: secret, RATE_LIMIT_INGEST_PER_MIN: '10000000', RATE_LIMIT_READ_PER_MIN: '10000000', ...vars };
  const args = [WRANGLER, 'dev', '--local', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', persist, '--show-interactive-dev-session=false', '--log-level', 'error'];
  for (const [k, v] of Object.entries(allVars)) args.push('--var', `${k}:${v}`);
  const child = spawn(process.execPath, args, { cwd: dir, stdio: 'pipe', env: { ...process.env, ...QUIET_ENV } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`wrangler dev did not become ready:\n${output}`);
    }
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  const token = await mintDevToken(url, secret, { team: 'bench', user: 'bencher', device: 'bench-box' });
  return {
    url,
    token,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 3000).unref();
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the scripted fake Messages API on 127.0.0.1 (bundled from the test support file). */
export async function startFakeObserver() {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-fake-llm-'));
  const outfile = path.join(dir, 'fake-llm.mjs');
  await build({ entryPoints: [path.join(ROOT, 'test', 'support', 'fake-llm.ts')], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'error' });
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
