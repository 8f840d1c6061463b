// Starts `wrangler dev` in local mode (local D1 + Durable Objects, migrations applied) and mints a dev
// token. Used by `npm start` and by the Node-side tests and benchmarks.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { startEmbedderServer } from './sentence-embedder.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WRANGLER = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

/** Worker settings that may come from the process environment. */
/** Keep wrangler offline: no Request.cf download, no telemetry. */
export const QUIET_ENV = { CI: '1', WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' };

export const PASSTHROUGH_VARS = [
  'CAIRN_ADMIN_SECRET',
  'CAIRN_MODE',
  'OBSERVER_PROVIDER',
  'OBSERVER_MODEL',
  'OBSERVER_READONLY_MODEL',
  'OBSERVER_CONCURRENCY',
  'OBSERVER_CONTEXT_TOKENS',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'RATE_LIMIT_INGEST_PER_MIN',
  'RATE_LIMIT_READ_PER_MIN',
  'SESSION_RETENTION_SECONDS',
];

/**
 * Tables of wrangler.toml that only work against Cloudflare: local runs use D1 vectors and the offline embedder,
 * and wrangler dev never fires cron triggers (tests call the scheduled handler themselves).
 */
const REMOTE_ONLY_TABLES = new Set(['[[vectorize]]', '[ai]', '[triggers]']);
/** Of those, the bindings (wrangler warns about each one it cannot serve locally). */
const REMOTE_ONLY_BINDINGS = new Set(['[[vectorize]]', '[ai]']);

/**
 * wrangler.toml for local runs: the same Worker without the remote-only bindings (Vectorize, Workers AI) and cron triggers, so
 * `wrangler dev` has nothing to warn about; `main`, `migrations_dir` and the assets `directory` absolute, so the file can live anywhere.
 * With `keepRemoteBindings` (the vitest pool, whose tests stub env.AI and env.VECTORS) every table stays and those bindings are marked
 * `remote = true`: without a remote proxy (the pool runs with remoteBindings off) that changes nothing but
 * wrangler's two warnings about them. Line-based: a table runs from its header to the next header.
 */
export function localWranglerToml(
  text,
  { main, migrationsDir, assetsDir = path.join(ROOT, 'dist', 'assets'), keepRemoteBindings = false },
) {
  const out = [];
  let dropping = false;
  for (const line of text.split('\n')) {
    const header = /^\s*(\[\[?[^\]]+\]\]?)\s*(?:#.*)?$/.exec(line)?.[1]?.replace(/\s+/g, '');
    if (header) dropping = !keepRemoteBindings && REMOTE_ONLY_TABLES.has(header);
    if (dropping) continue;
    out.push(
      line
        .replace(/^main = .*$/, `main = ${JSON.stringify(main)}`)
        .replace(/^migrations_dir = .*$/, `migrations_dir = ${JSON.stringify(migrationsDir)}`)
        .replace(/^directory = .*$/, `directory = ${JSON.stringify(assetsDir)}`),
    );
    if (header && keepRemoteBindings && REMOTE_ONLY_BINDINGS.has(header)) out.push('remote = true');
  }
  return out.join('\n');
}

/**
 * The vitest pool's wrangler.toml (see localWranglerToml's keepRemoteBindings), written in a folder of the system's
 * temp dir named after this checkout; returns its path. Not under node_modules: worktrees that share one
 * node_modules (a symlink) would otherwise overwrite each other's file, and a test run would serve another
 * checkout's Worker as its main module.
 */
export function poolWranglerConfig(root = ROOT) {
  const dir = path.join(
    tmpdir(),
    `cairn-vitest-pool-${createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 12)}`,
  );
  mkdirSync(dir, { recursive: true });
  const text = readFileSync(path.join(root, 'wrangler.toml'), 'utf8');
  const toml = localWranglerToml(text, {
    main: path.join(root, /^main = "(.*)"$/m.exec(text)?.[1] ?? 'src/index.ts'),
    migrationsDir: path.join(root, 'migrations'),
    assetsDir: path.join(root, 'dist', 'assets'),
    keepRemoteBindings: true,
  });
  const file = path.join(dir, 'wrangler.toml');
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, toml);
  renameSync(tmp, file);
  return file;
}

/**
 * Writes the local config into `dir` (with the checkout's .dev.vars/.env beside it, which wrangler reads from
 * there). `root` is the checkout whose config, migrations and assets are used (benchmarks serve a baseline).
 */
function writeLocalConfig(dir, main, root = ROOT) {
  mkdirSync(dir, { recursive: true });
  const toml = localWranglerToml(readFileSync(path.join(root, 'wrangler.toml'), 'utf8'), {
    main,
    migrationsDir: path.join(root, 'migrations'),
    assetsDir: path.join(root, 'dist', 'assets'),
  });
  // Atomic: several test files may start servers from this checkout at once.
  const tmp = path.join(dir, `wrangler.toml.${process.pid}.tmp`);
  writeFileSync(tmp, toml);
  renameSync(tmp, path.join(dir, 'wrangler.toml'));
  for (const name of ['.dev.vars', '.env']) {
    if (existsSync(path.join(ROOT, name))) copyFileSync(path.join(ROOT, name), path.join(dir, name));
    else rmSync(path.join(dir, name), { force: true });
  }
  return path.join(dir, 'wrangler.toml');
}

function wrangler(args, cwd) {
  const r = spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...QUIET_ENV },
  });
  if (r.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
}

/** The D1 bindings a wrangler.toml declares (`DB` and the shards `DB_1`, …), in file order. */
export function d1Bindings(text) {
  const out = [];
  let inD1 = false;
  for (const line of text.split('\n')) {
    const header = /^\s*(\[\[?[^\]]+\]\]?)\s*(?:#.*)?$/.exec(line)?.[1]?.replace(/\s+/g, '');
    if (header) inD1 = header === '[[d1_databases]]';
    const binding = inD1 ? /^\s*binding\s*=\s*"([^"]+)"/.exec(line)?.[1] : undefined;
    if (binding) out.push(binding);
  }
  return out;
}

/**
 * Applies the migrations to every D1 binding of the config in `cwd` (each shard carries the same schema). A
 * `persistTo` with no D1 state yet gets a copy of a database migrated once for these exact migrations and config
 * (migratedTemplate): `wrangler d1 migrations apply` on an empty database takes ~15 s here (one wrangler a binding,
 * every migration), and the test suite starts about ten servers, each on a database of its own.
 */
export function applyMigrations({ persistTo, cwd = ROOT } = {}) {
  if (persistTo && !existsSync(path.join(persistTo, 'v3', 'd1'))) {
    cpSync(path.join(migratedTemplate(cwd), 'v3', 'd1'), path.join(persistTo, 'v3', 'd1'), { recursive: true });
    return;
  }
  migrate(persistTo, cwd);
}

function migrate(persistTo, cwd) {
  for (const binding of d1Bindings(readFileSync(path.join(cwd, 'wrangler.toml'), 'utf8'))) {
    const args = ['d1', 'migrations', 'apply', binding, '--local'];
    if (persistTo) args.push('--persist-to', persistTo);
    wrangler(args, cwd);
  }
}

/**
 * A folder of the system's temp dir holding empty databases migrated by `wrangler d1 migrations apply` for the
 * config in `cwd`, named after everything that decides their contents: that config (bindings, database ids, the
 * migrations folder), each migration's name and text, and wrangler's version. Built once into a temporary folder
 * and renamed into place. Processes that want it at once (the test files of a run, two at a time, each starting a
 * server) wait for the one holding its lock instead of each building it on the same cores; a lock left by a process
 * that died is taken over at once (its pid is gone), or after TEMPLATE_LOCK_MS.
 */
export function templateDir(cwd) {
  const toml = readFileSync(path.join(cwd, 'wrangler.toml'), 'utf8');
  const migrationsDir = path.resolve(cwd, /^migrations_dir = "(.*)"$/m.exec(toml)?.[1] ?? 'migrations');
  const hash = createHash('sha256')
    .update(toml)
    .update(readFileSync(path.join(path.dirname(WRANGLER), '..', 'package.json')));
  for (const name of readdirSync(migrationsDir).sort()) {
    if (name.endsWith('.sql')) hash.update(name).update(readFileSync(path.join(migrationsDir, name)));
  }
  return path.join(tmpdir(), `cairn-d1-migrated-${hash.digest('hex').slice(0, 16)}`);
}

/** The migrated template for the config in `cwd` (templateDir), built first if it is not there yet. */
export function migratedTemplate(cwd) {
  const dir = templateDir(cwd);
  const built = () => existsSync(path.join(dir, 'v3', 'd1'));
  const lock = `${dir}.lock`;
  while (!built() && !takeLock(lock)) sleepSync(250);
  if (built()) return dir;
  const building = mkdtempSync(`${dir}.building-`);
  try {
    migrate(building, cwd);
    renameSync(building, dir);
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    if (!built()) throw err;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return dir;
}

/** How long a template's lock may be held before another process takes it over (its holder died). */
const TEMPLATE_LOCK_MS = 180_000;

/**
 * Takes the lock folder `lock` (mkdir is atomic; the holder's pid goes in it), or one whose holder is gone: its
 * process no longer runs (a run killed mid-build), or it is older than TEMPLATE_LOCK_MS. False while another holds it.
 */
function takeLock(lock) {
  try {
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(process.pid));
    return true;
  } catch {
    try {
      if (!holderGone(lock) && Date.now() - statSync(lock).mtimeMs < TEMPLATE_LOCK_MS) return false;
      rmSync(lock, { recursive: true, force: true });
    } catch {}
    return false;
  }
}

/** Whether the process named in the lock has ended (a lock without a pid yet is being taken: not gone). */
function holderGone(lock) {
  let pid;
  try {
    pid = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: it runs under another user; only ESRCH says it is gone.
    return err?.code === 'ESRCH';
  }
}

/** Blocks this thread for `ms` (applyMigrations is synchronous, as its callers are). */
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Bundles the Worker once into a temp folder with its own wrangler.toml, so that wrangler dev serves a
 * snapshot: benchmarks in a shared checkout must not restart when someone saves a source file.
 */
function snapshotWorker(dir, root = ROOT) {
  wrangler(['deploy', '--dry-run', '--outdir', path.join(dir, 'dist')], root);
  writeLocalConfig(dir, path.join(dir, 'dist', 'index.js'), root);
}

/** A TCP port that was free a moment ago (the OS picks it), for wrangler's inspector and throwaway servers. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Runs wrangler dev and resolves once /api/health answers.
 * `snapshot: true` serves a bundled copy from a fresh temp folder (and database), removed on stop; `root`
 * (with `snapshot`) bundles another checkout instead of this one (benchmarks compare against a baseline).
 * `embedder: true` also starts the sentence model in this process (scripts/sentence-embedder.mjs) and hands
 * its 127.0.0.1 URL to the Worker, which then embeds with it; without it local search is keyword search. With
 * `root`, the model service is that checkout's own (a baseline is measured with the service it shipped with).
 * `processGroup: true` starts wrangler in a process group of its own (with workerd and everything it starts), so
 * a test can kill the whole tree at once (`process.kill(-child.pid, 'SIGKILL')`) as a crash or a deploy would.
 * @param {{root?: string, port?: number, persistTo?: string, vars?: Record<string,string>, stdio?: 'inherit'|'pipe', timeoutMs?: number, snapshot?: boolean, logLevel?: string, embedder?: boolean, processGroup?: boolean}} opts
 */
export async function startDevServer(opts = {}) {
  const embedder = opts.embedder ? await (await embedderOf(opts.root)).startEmbedderServer() : null;
  try {
    return await startWrangler(opts, embedder);
  } catch (err) {
    await embedder?.stop();
    throw err;
  }
}

/** The sentence-embedder module of `root` when it has one, else this checkout's. */
async function embedderOf(root) {
  const other = root && path.join(root, 'scripts', 'sentence-embedder.mjs');
  return other && existsSync(other) ? import(pathToFileURL(other).href) : { startEmbedderServer };
}

async function startWrangler(opts, embedder) {
  const port = opts.port ?? 8787;
  const temp = opts.snapshot ? mkdtempSync(path.join(tmpdir(), 'cairn-snapshot-')) : null;
  if (temp) snapshotWorker(temp, opts.root);
  // Not a snapshot: the checkout's sources (wrangler dev reloads on save), config generated under .wrangler/.
  const cwd = temp ?? path.join(ROOT, '.wrangler', 'local');
  if (!temp) writeLocalConfig(cwd, path.join(ROOT, 'src', 'index.ts'));
  // The checkout's usual local database (.wrangler/state) unless told otherwise.
  const persistTo = opts.persistTo ?? (temp ? path.join(temp, 'state') : path.join(ROOT, '.wrangler', 'state'));
  applyMigrations({ persistTo, cwd });
  const vars = { CAIRN_LOCAL: '1', ...(embedder ? { CAIRN_EMBEDDER_URL: embedder.url } : {}), ...opts.vars };
  const args = [
    WRANGLER,
    'dev',
    '--local',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--show-interactive-dev-session=false',
    '--log-level',
    opts.logLevel ?? 'warn',
  ];
  if (persistTo) args.push('--persist-to', persistTo);
  // Several wrangler devs share this machine: the inspector's default port (9229) would collide.
  args.push('--inspector-port', String(opts.inspectorPort ?? (await freePort())));
  for (const [k, v] of Object.entries(vars)) if (v !== undefined && v !== '') args.push('--var', `${k}:${v}`);
  const child = spawn(process.execPath, args, {
    cwd,
    stdio: opts.stdio ?? 'pipe',
    env: { ...process.env, ...QUIET_ENV },
    detached: opts.processGroup === true,
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  if (Date.now() >= deadline) {
    child.kill('SIGTERM');
    if (temp) rmSync(temp, { recursive: true, force: true });
    throw new Error(`wrangler dev did not become ready:\n${output}`);
  }
  // With a process group of its own, a signal goes to the whole group (wrangler, workerd and their children).
  const signal = (sig) => (opts.processGroup ? process.kill(-child.pid, sig) : child.kill(sig));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      signal('SIGTERM');
      setTimeout(() => child.exitCode === null && child.signalCode === null && signal('SIGKILL'), 3000).unref();
      await exited;
    }
    if (temp) rmSync(temp, { recursive: true, force: true });
    await embedder?.stop();
  };
  return { url, port, child, stop, output: () => output };
}

/** Creates (or reuses) a team/user/device through the bootstrap endpoint and returns a fresh token. */
export async function mintDevToken(url, adminSecret, { team = 'local', user = 'me', device = 'this-machine' } = {}) {
  const res = await fetch(`${url}/api/admin/teams`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminSecret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ team, user, device }),
  });
  if (!res.ok) throw new Error(`bootstrap failed: ${res.status} ${await res.text()}`);
  return (await res.json()).token;
}
