// Tools only some suites need, kept out of `npm install`: the real Claude Code CLI (test/e2e, `npm run
// claude:payloads`, ~400 MB) and claude-mem with the bun that runs it (the import tests, ~120 MB). Each is pinned
// by its own package.json and package-lock.json under scripts/tools/<name>/ and installed from the npm registry
// on first use into .tools/<name>/ (git-ignored), again only when its lock file changes.
//   node scripts/tools.mjs claude-code claude-mem     installs (if needed) and prints where each is
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SPECS = path.join(ROOT, 'scripts', 'tools');
export const TOOLS_DIR = path.join(ROOT, '.tools');

/** The tools there are: folder names under scripts/tools. */
export const TOOLS = ['claude-code', 'claude-mem'];

/** The exact version a tool pins for one of its packages (from scripts/tools/<name>/package.json). */
export function pinnedVersion(tool, pkg) {
  const spec = JSON.parse(readFileSync(path.join(SPECS, tool, 'package.json'), 'utf8'));
  const v = spec.dependencies?.[pkg];
  if (!v) throw new Error(`scripts/tools/${tool}/package.json pins no ${pkg}`);
  return v;
}

const installedLock = (dir) => path.join(dir, 'package-lock.json');
const sameFile = (a, b) => existsSync(a) && existsSync(b) && readFileSync(a, 'utf8') === readFileSync(b, 'utf8');

/**
 * The folder a tool is installed in, installing it first when it is missing or its lock file changed (two runs
 * at once may both install; neither ever sees half a tool).
 */
export function ensureTool(tool, { quiet = false } = {}) {
  if (!TOOLS.includes(tool)) throw new Error(`unknown tool ${tool} (one of ${TOOLS.join(', ')})`);
  const spec = path.join(SPECS, tool);
  const dir = path.join(TOOLS_DIR, tool);
  if (sameFile(path.join(spec, 'package-lock.json'), installedLock(dir)) && existsSync(path.join(dir, 'node_modules')))
    return dir;
  mkdirSync(TOOLS_DIR, { recursive: true });
  // Installed beside its place and renamed into it: a folder at .tools/<name> is always a whole install.
  const temp = `${dir}.installing-${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp);
  copyFileSync(path.join(spec, 'package.json'), path.join(temp, 'package.json'));
  copyFileSync(path.join(spec, 'package-lock.json'), installedLock(temp));
  if (!quiet) process.stderr.write(`installing ${tool} (pinned in scripts/tools/${tool}) into .tools/${tool} …\n`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--legacy-peer-deps', '--loglevel=error'], {
    cwd: temp,
    stdio: quiet ? 'pipe' : ['ignore', process.stderr, process.stderr],
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    rmSync(temp, { recursive: true, force: true });
    throw new Error(`npm ci for ${tool} failed (${r.status}):\n${r.stdout ?? ''}${r.stderr ?? ''}`);
  }
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(temp, dir);
  } catch (err) {
    // Another run put it there first: theirs is as good as ours.
    rmSync(temp, { recursive: true, force: true });
    if (!existsSync(installedLock(dir))) throw err;
  }
  return dir;
}

/** `require.resolve` inside a tool's own node_modules (installing the tool first if needed). */
export function resolveInTool(tool, request) {
  return createRequire(path.join(ensureTool(tool), 'package.json')).resolve(request);
}

/** The native Claude Code binary (its platform package; npm 11 does not run the wrapper's postinstall copy). */
export function claudeBinary() {
  const pkg = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  const file = path.join(
    path.dirname(resolveInTool('claude-code', `${pkg}/package.json`)),
    process.platform === 'win32' ? 'claude.exe' : 'claude',
  );
  if (!existsSync(file)) throw new Error(`${pkg} has no claude binary`);
  return file;
}

/** claude-mem's package folder and the bun binary that runs its SessionStore. */
export function claudeMemTools() {
  const modules = path.join(ensureTool('claude-mem'), 'node_modules');
  const platformBun = path.join(modules, '@oven', `bun-${process.platform}-${process.arch}`, 'bin', 'bun');
  return {
    claudeMem: path.join(modules, 'claude-mem'),
    bun: existsSync(platformBun) ? platformBun : path.join(modules, '.bin', 'bun'),
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = process.argv.slice(2);
  for (const tool of wanted.length ? wanted : TOOLS) console.log(`${tool}: ${ensureTool(tool)}`);
}
