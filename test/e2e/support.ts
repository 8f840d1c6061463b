// The real Claude Code CLI (the pinned @anthropic-ai/claude-code) in a throwaway HOME, pointed at a scripted
// model on 127.0.0.1, with cairn installed by its own `cairn install` against `wrangler dev`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tools = (await import(new URL('../../scripts/tools.mjs', import.meta.url).href)) as {
  claudeBinary(): string;
  pinnedVersion(tool: string, pkg: string): string;
};
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLIENT = join(ROOT, 'hooks-client', 'dist', 'cairn.cjs');

/**
 * The native binary of the pinned CLI. Not a devDependency: scripts/tools.mjs installs it into .tools/claude-code
 * on first use (the e2e config's global setup does, before any test runs).
 */
export const claudeBinary = (): string => tools.claudeBinary();

export const pinnedClaudeVersion = (): string => tools.pinnedVersion('claude-code', '@anthropic-ai/claude-code');

export interface Machine {
  home: string;
  repo: string;
  /** Environment for cairn and claude: only this HOME, the model on 127.0.0.1, no outside traffic. */
  env: Record<string, string>;
}

/** A HOME with onboarding done and the repository trusted, and a git repository with a file worth notes. */
export function newMachine(modelUrl: string): Machine {
  const home = mkdtempSync(join(tmpdir(), 'cairn-claude-e2e-'));
  const repo = join(home, 'code', 'widgets');
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  execFileSync('git', ['remote', 'add', 'origin', 'git@github.com:acme/widgets.git'], { cwd: repo });
  const lines = Array.from({ length: 100 }, (_, i) => `export const route${i} = "/widgets/${i}";`);
  writeFileSync(join(repo, 'routes.ts'), `// the widget routes\n${lines.join('\n')}\n`);
  const apiKey = 'sk-ant-e2e-0000000000000000000000';
  writeFileSync(
    join(home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      // The interactive CLI asks once whether to use a key from the environment: answered yes in advance.
      customApiKeyResponses: { approved: [apiKey.slice(-20)], rejected: [] },
      projects: { [repo]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
  const env: Record<string, string> = {
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    TERM: 'xterm-256color',
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Each machine's sender gets its own HTTP hook door (the default port is per user, and every test machine
    // here is the same user); it leaves 60 s after its last work, so no test leaves one behind for long.
    CAIRN_SENDER_PORT: String(42_000 + Math.floor(Math.random() * 18_000)),
    CAIRN_SENDER_IDLE_MS: '60000',
  };
  return { home, repo, env };
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runProcess(
  file: string,
  args: string[],
  opts: { env: Record<string, string>; cwd: string; timeoutMs?: number },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export const cairn = (m: Machine, args: string[]) =>
  runProcess(process.execPath, [CLIENT, ...args], { env: m.env, cwd: m.repo });

/** `claude -p` with JSON output; the session id comes back in the result. */
export async function claudePrint(
  m: Machine,
  prompt: string,
  allowedTools: string[],
): Promise<Ran & { sessionId: string; result: string }> {
  const r = await runProcess(
    claudeBinary(),
    ['-p', prompt, '--output-format', 'json', '--allowedTools', allowedTools.join(',')],
    { env: m.env, cwd: m.repo },
  );
  let parsed: { session_id?: string; result?: string } = {};
  try {
    parsed = JSON.parse(r.stdout) as typeof parsed;
  } catch {
    // left empty: the caller's assertions say what came back
  }
  return { ...r, sessionId: parsed.session_id ?? '', result: parsed.result ?? '' };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | null = null;
  while (Date.now() < deadline) {
    last = await probe();
    if (last !== null) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * One interactive Claude Code session under tmux: types the prompt, waits until `doneText` is on screen, then
 * /exit. Returns the session id (the newest transcript of the repository) and the last screen.
 */
export async function claudeInteractive(
  m: Machine,
  prompt: string,
  allowedTools: string[],
  doneText: string,
): Promise<{ sessionId: string; screen: string }> {
  const sock = join(m.home, 'tmux.sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', sock, ...args], { encoding: 'utf8' });
  const envArgs = Object.entries(m.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const command = [claudeBinary(), '--allowedTools', allowedTools.join(',')]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  tmux('new-session', '-d', '-s', 'e2e', '-x', '160', '-y', '50', '-c', m.repo, ...envArgs, command);
  const screen = () => tmux('capture-pane', '-p', '-t', 'e2e');
  try {
    await waitFor('the interactive prompt', async () => (screen().includes('❯') ? true : null), 60_000);
    tmux('send-keys', '-t', 'e2e', '-l', prompt);
    tmux('send-keys', '-t', 'e2e', 'Enter');
    const last = await waitFor(
      `"${doneText}" on screen`,
      async () => {
        const s = screen();
        return s.includes(doneText) ? s : null;
      },
      120_000,
    );
    tmux('send-keys', '-t', 'e2e', '-l', '/exit');
    tmux('send-keys', '-t', 'e2e', 'Enter');
    // The session (and with it SessionEnd) is over when tmux has nothing left to run.
    await waitFor(
      'claude to exit',
      async () => {
        try {
          tmux('has-session', '-t', 'e2e');
          return null;
        } catch {
          return true;
        }
      },
      60_000,
    );
    const projects = join(m.home, '.claude', 'projects');
    const transcripts = readdirSync(projects, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith('.jsonl'))
      .map((d) => join(d.parentPath, d.name))
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
    return { sessionId: basename(transcripts[0] ?? '', '.jsonl'), screen: last };
  } finally {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  }
}
