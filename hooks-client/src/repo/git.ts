// The one way the client runs git. A repository's own config (.git/config: a clone's, an archive's) can name
// programs git runs on its behalf: `core.fsmonitor` runs on any index read (`git ls-files`), `gpg.program` with
// `log.showSignature` on any signed commit `git log` shows, pagers, hooks, external diff and textconv drivers,
// transports for a lazy fetch. Here every one of them is off, whatever that config says (`-c` on the command
// line beats every config file), git is given the repository and work tree explicitly (no discovery: the
// folder was checked by locate.ts and trust.ts), found as an absolute path on PATH (never in the checkout, never
// a relative PATH entry), run without a shell, bounded in time and output, with none of the caller's GIT_*
// variables but the user's global config file.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, sep } from 'node:path';
import type { Io } from '../io';
import type { RepoInfo } from './locate';

/** Every setting through which a repository's config could make git run a program, or fetch. */
export const HARDENING: readonly string[] = [
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.sshCommand=false',
  'core.askPass=false',
  'credential.helper=',
  'log.showSignature=false',
  'gpg.program=false',
  'gpg.openpgp.program=false',
  'gpg.x509.program=false',
  'gpg.ssh.program=false',
  'protocol.allow=never',
  'gc.auto=0',
  'maintenance.auto=false',
].flatMap((kv) => ['-c', kv]);

/** The environment git runs with: the caller's, without GIT_* (a hook's GIT_DIR must not redirect it), plus these. */
const GIT_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_NO_LAZY_FETCH: '1',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  LC_ALL: 'C',
};

export function gitEnv(env: Io['env']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith('GIT_')) out[k] = v;
  if (env.GIT_CONFIG_GLOBAL) out.GIT_CONFIG_GLOBAL = env.GIT_CONFIG_GLOBAL;
  return { ...out, ...GIT_ENV };
}

/**
 * git's absolute path: the first executable `git` in an absolute PATH folder outside `root`. An empty or `.` PATH
 * entry means the current folder, and Windows looks in the current folder first: a checkout could ship its own.
 */
export function gitExecutable(env: Io['env'], root: string): string | null {
  const names = process.platform === 'win32' ? ['git.exe'] : ['git'];
  const inside = (p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
  for (const dir of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir) || inside(dir)) continue;
    for (const n of names) {
      const p = join(dir, n);
      try {
        if (!statSync(p).isFile()) continue;
        accessSync(p, constants.X_OK);
        return p;
      } catch {
        // not here
      }
    }
  }
  return null;
}

export interface GitRun {
  /** The arguments after git's own options, e.g. ['ls-files', '-z']. */
  args: string[];
  env: Io['env'];
  timeoutMs: number;
  maxBytes: number;
}

/** The full command line: git's options (explicit repository, hardening) before the command's arguments. */
export function gitArgv(repo: RepoInfo, args: string[]): string[] {
  return [
    '--no-pager',
    '--no-replace-objects',
    `--git-dir=${repo.gitDir}`,
    `--work-tree=${repo.root}`,
    ...HARDENING,
    ...args,
  ];
}

/** git's standard output, or null: no git, a failure, a timeout, or more output than allowed. */
export function runGit(repo: RepoInfo, run: GitRun): string | null {
  const exe = gitExecutable(run.env, repo.root);
  if (!exe || run.timeoutMs < 1) return null;
  // child_process is loaded here, on use: no hook that runs no git pays for it.
  const r = process.getBuiltinModule('node:child_process').spawnSync(exe, gitArgv(repo, run.args), {
    cwd: repo.root,
    env: gitEnv(run.env),
    encoding: 'utf8',
    maxBuffer: run.maxBytes,
    timeout: run.timeoutMs,
    stdio: ['ignore', 'pipe', 'ignore'],
    windowsHide: true,
  });
  return r.status === 0 && typeof r.stdout === 'string' ? r.stdout : null;
}

/** runGit without blocking the event loop (SessionStart runs it beside its server request). */
export function runGitAsync(repo: RepoInfo, run: GitRun): Promise<string | null> {
  const exe = gitExecutable(run.env, repo.root);
  // execFile reads a timeout of 0 as none: no time left means no git at all.
  if (!exe || run.timeoutMs < 1) return Promise.resolve(null);
  return new Promise((done) => {
    process.getBuiltinModule('node:child_process').execFile(
      exe,
      gitArgv(repo, run.args),
      {
        cwd: repo.root,
        env: gitEnv(run.env),
        encoding: 'utf8',
        maxBuffer: run.maxBytes,
        timeout: Math.floor(run.timeoutMs),
        windowsHide: true,
      },
      (err, stdout) => done(err ? null : String(stdout)),
    );
  });
}
