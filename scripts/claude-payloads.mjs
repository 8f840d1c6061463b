// Records the hook payloads of the pinned Claude Code CLI and compares them with the committed sample
// (test/e2e/claude-code-payloads.json), so a CLI upgrade shows at once which events and fields changed.
//
//   npm run claude:payloads                 re-record with the installed CLI, print what changed, write the sample
//   npm run claude:bump -- 2.1.340          pin that version (npm i -D -E), then the same
//
// A scripted model on 127.0.0.1 drives one headless session (`claude -p`) through a Read, an Edit, a failing
// and a passing command; a recording hook on every event keeps the first payload of each event (per tool).
// Machine paths, ids and timings are replaced by placeholders so the sample is the same on every machine.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { claudeBinary } from './tools.mjs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SAMPLE = path.join(ROOT, 'test', 'e2e', 'claude-code-payloads.json');
const EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'Notification',
  'SessionEnd',
];

async function loadFakeModel(dir) {
  const { build } = await import('esbuild');
  const out = path.join(dir, 'fake-agent-model.mjs');
  await build({
    entryPoints: [path.join(ROOT, 'test', 'support', 'fake-agent-model.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    logLevel: 'error',
  });
  return import(pathToFileURL(out).href);
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

/** Placeholders for what differs between machines and runs; object keys sorted so diffs show real changes. */
export function scrub(value, { home, repo }) {
  if (typeof value === 'string') {
    return value
      .split(repo)
      .join('$REPO')
      .split(home)
      .join('$HOME')
      .replace(UUID, '<uuid>')
      .replace(/toolu_[\w]+/g, '<tool_use_id>')
      .replace(/-tmp-[\w-]+-code-widgets/g, '<project-slug>');
  }
  if (typeof value === 'number') return Number.isInteger(value) ? 0 : 0.5;
  if (Array.isArray(value)) return value.map((v) => scrub(v, { home, repo }));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, scrub(value[k], { home, repo })]),
    );
  }
  return value;
}

/** Runs one scripted headless session and returns the first payload of every event (per tool for tool events). */
export async function recordPayloads() {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-claude-payloads-'));
  const { startFakeAgentModel } = await loadFakeModel(dir);
  const model = await startFakeAgentModel();
  const home = path.join(dir, 'home');
  const repo = path.join(home, 'code', 'widgets');
  try {
    mkdirSync(path.join(home, '.claude'), { recursive: true });
    mkdirSync(repo, { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: repo });
    writeFileSync(path.join(repo, 'notes.txt'), 'alpha\nbeta\n');
    const log = path.join(dir, 'payloads.jsonl');
    const recorder = path.join(dir, 'record.cjs');
    writeFileSync(
      recorder,
      `const c=[];process.stdin.on('data',d=>c.push(d)).on('end',()=>require('fs').appendFileSync(${JSON.stringify(log)},JSON.stringify({event:process.argv[2],payload:JSON.parse(Buffer.concat(c).toString()||'{}')})+'\\n'));\n`,
    );
    const hooks = Object.fromEntries(
      EVENTS.map((e) => [
        e,
        [
          {
            ...(/Tool/.test(e) ? { matcher: '*' } : {}),
            hooks: [{ type: 'command', command: `node "${recorder}" ${e}`, timeout: 10 }],
          },
        ],
      ]),
    );
    writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ hooks }));
    writeFileSync(
      path.join(home, '.claude.json'),
      JSON.stringify({ hasCompletedOnboarding: true, projects: { [repo]: { hasTrustDialogAccepted: true } } }),
    );
    const file = path.join(repo, 'notes.txt');
    model.script('payloads', [
      [{ type: 'tool_use', name: 'Read', input: { file_path: file } }],
      [{ type: 'tool_use', name: 'Edit', input: { file_path: file, old_string: 'beta', new_string: 'gamma' } }],
      [
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: 'node -e "process.exit(2)"', description: 'A failing check' },
        },
      ],
      [{ type: 'tool_use', name: 'Bash', input: { command: 'echo passing', description: 'A passing check' } }],
      [{ type: 'text', text: 'Changed beta to gamma.' }],
    ]);
    const env = {
      PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: home,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-ant-payloads-000000000000',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    };
    const code = await new Promise((resolve, reject) => {
      const child = spawn(
        claudeBinary(),
        ['-p', 'SCENARIO:payloads change beta to gamma', '--output-format', 'json', '--allowedTools', 'Read,Edit,Bash'],
        { cwd: repo, env, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0) throw new Error(`claude -p exited ${code}`);
    const version = execFileSync(claudeBinary(), ['--version'], { env, encoding: 'utf8' }).trim().split(/\s/)[0];
    const events = {};
    for (const line of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
      const { event, payload } = JSON.parse(line);
      const key = payload.tool_name ? `${event}:${payload.tool_name}` : event;
      events[key] ??= scrub(payload, { home, repo });
    }
    return {
      claude_code: version,
      events: Object.fromEntries(
        Object.keys(events)
          .sort()
          .map((k) => [k, events[k]]),
      ),
    };
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each event's fields as `name: type` lines, for comparing shapes rather than values. */
export function shapeOf(sample) {
  const out = {};
  const walk = (prefix, v, acc) => {
    const type = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
    if (prefix) acc.push(`${prefix}: ${type}`);
    if (type === 'object') for (const k of Object.keys(v)) walk(prefix ? `${prefix}.${k}` : k, v[k], acc);
  };
  for (const [event, payload] of Object.entries(sample.events)) {
    const acc = [];
    walk('', payload, acc);
    out[event] = acc.sort();
  }
  return out;
}

/** Human-readable differences in events and fields between two samples ('' when the shapes agree). */
export function describeChanges(before, after) {
  const a = shapeOf(before);
  const b = shapeOf(after);
  const lines = [];
  for (const e of Object.keys(b)) if (!a[e]) lines.push(`+ event ${e}`);
  for (const e of Object.keys(a)) if (!b[e]) lines.push(`- event ${e}`);
  for (const e of Object.keys(b)) {
    if (!a[e]) continue;
    for (const f of b[e]) if (!a[e].includes(f)) lines.push(`+ ${e} ${f}`);
    for (const f of a[e]) if (!b[e].includes(f)) lines.push(`- ${e} ${f}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const bump = process.argv.indexOf('--bump');
  if (bump !== -1) {
    const version = process.argv[bump + 1];
    if (!version || !/^\d+\.\d+\.\d+$/.test(version)) throw new Error('usage: npm run claude:bump -- <version>');
    // The CLI is pinned in scripts/tools/claude-code (not a devDependency): the pin and its lock file move, and the
    // next claudeBinary() installs the new version into .tools/claude-code.
    execFileSync(
      'npm',
      [
        'install',
        '--package-lock-only',
        '--save-exact',
        '--legacy-peer-deps',
        '--no-audit',
        '--no-fund',
        `@anthropic-ai/claude-code@${version}`,
      ],
      { cwd: path.join(ROOT, 'scripts', 'tools', 'claude-code'), stdio: 'inherit' },
    );
  }
  const before = existsSync(SAMPLE) ? JSON.parse(readFileSync(SAMPLE, 'utf8')) : { claude_code: 'none', events: {} };
  const after = await recordPayloads();
  writeFileSync(SAMPLE, `${JSON.stringify(after, null, 2)}\n`);
  const changes = describeChanges(before, after);
  console.log(`hook payloads of Claude Code ${before.claude_code} → ${after.claude_code}:`);
  console.log(changes || '  no event or field added, removed or retyped');
  console.log(
    `(written to ${path.relative(ROOT, SAMPLE)}; \`git diff ${path.relative(ROOT, SAMPLE)}\` shows the values)`,
  );
}
