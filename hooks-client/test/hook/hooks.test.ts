// Every hook event through run(argv, io), with payloads in Claude Code's documented shapes, against a fake API.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUDGET_MS } from '../../src/hook/context';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.handler = undefined;
  server.context = { index: '', file: '', prompt: '' };
});

async function hook(event: string, fields: Record<string, unknown>, env = machine(server.url).env) {
  const io = memIo({ env, stdin: hookJson(fields) });
  const code = await run(['hook', event], io);
  return {
    code,
    io,
    out: io.stdout
      ? (JSON.parse(io.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } })
      : null,
  };
}

const ingest = () => server.requests.filter((r) => r.method === 'POST');

describe('every event', () => {
  it('carries Claude Code’s prompt_id when the payload has one, and a client_seq that grows across hook processes', async () => {
    const env = machine(server.url).env;
    const cwd = tempDir();
    const steps: Array<[string, Record<string, unknown>]> = [
      ['user-prompt-submit', { cwd, prompt: 'rename the widgets table', prompt_id: 'pid-7' }],
      [
        'post-tool-use',
        {
          cwd,
          prompt_id: 'pid-7',
          tool_name: 'Bash',
          tool_input: { command: 'ls' },
          tool_response: 'a b',
          tool_use_id: 'seq-1',
        },
      ],
      [
        'post-tool-use-failure',
        {
          cwd,
          prompt_id: 'pid-7',
          tool_name: 'Bash',
          tool_input: { command: 'false' },
          error: 'exit 1',
          tool_use_id: 'seq-2',
        },
      ],
      ['stop', { cwd, prompt_id: 'pid-7', last_assistant_message: 'Renamed it.' }],
      ['session-end', { cwd, prompt_id: 'pid-7', reason: 'other' }],
      // An older Claude Code without prompt ids: the field is left out, not sent empty.
      [
        'post-tool-use',
        { cwd, tool_name: 'Bash', tool_input: { command: 'pwd' }, tool_response: '/', tool_use_id: 'seq-3' },
      ],
    ];
    for (const [event, fields] of steps) expect((await hook(event, fields, env)).code).toBe(0);
    const sent = ingest().map((r) => r.json!);
    expect(sent.map((e) => e.prompt_id)).toEqual(['pid-7', 'pid-7', 'pid-7', 'pid-7', 'pid-7', undefined]);
    const seqs = sent.map((e) => e.client_seq as number);
    expect(seqs.every((n) => Number.isInteger(n) && n > 0)).toBe(true);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe('session-start', () => {
  it('injects the project context index as SessionStart additionalContext', async () => {
    server.context.index = '<cairn-context>\n#12 10:02 fixed the login race\n</cairn-context>';
    const repo = tempDir();
    const { code, out } = await hook('session-start', { cwd: repo, source: 'startup' });
    expect(code).toBe(0);
    expect(out?.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(out?.hookSpecificOutput.additionalContext).toContain('fixed the login race');
    const req = server.requests.find((r) => r.path.startsWith('/api/context?'))!;
    expect(new URL(req.path, 'http://x').searchParams.get('project')).toMatch(/^local\/cairn-test-/);
    expect(new URL(req.path, 'http://x').searchParams.get('tz')).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(req.headers.authorization).toBe('Bearer tok-test');
  });

  it('keeps the injected text under 10,000 characters and closes the wrapper', async () => {
    server.context.index = `<cairn-context>\n${'#1 12:00 a line of memory\n'.repeat(2_000)}</cairn-context>`;
    const { out } = await hook('session-start', { cwd: tempDir() });
    expect(out!.hookSpecificOutput.additionalContext.length).toBeLessThan(10_000);
    expect(out!.hookSpecificOutput.additionalContext.endsWith('</cairn-context>')).toBe(true);
  });

  it('prints nothing when the server has nothing to say or cannot be reached', async () => {
    expect((await hook('session-start', { cwd: tempDir() })).io.stdout).toBe('');
    const offline = await hook('session-start', { cwd: tempDir() }, machine('http://127.0.0.1:9').env);
    expect(offline.code).toBe(0);
    expect(offline.io.stdout).toBe('');
  });
});

describe('user-prompt-submit', () => {
  it('sends the prompt with the fields every ingest route needs', async () => {
    const cwd = tempDir();
    await hook('user-prompt-submit', { cwd, prompt: 'fix the flaky login test', prompt_id: 'p-1' });
    const [req] = ingest();
    expect(req!.path).toBe('/api/sessions/init');
    expect(req!.json).toMatchObject({
      session_id: 'sess-1',
      cwd,
      prompt: 'fix the flaky login test',
      private: false,
      platform: 'claude-code',
    });
    expect(typeof req!.json!.event_id).toBe('string');
    expect(req!.json!.project).toMatch(/^local\//);
    expect(Number.isNaN(Date.parse(String(req!.json!.occurred_at)))).toBe(false);
  });

  it('strips memory tags and tells the server when the whole prompt was private', async () => {
    await hook('user-prompt-submit', { prompt: 'keep <private>my salary is 100k</private> this' });
    await hook('user-prompt-submit', { prompt: '<private>all of it</private>' });
    const [partial, whole] = ingest();
    expect(partial!.json).toMatchObject({ prompt: 'keep  this', private: false });
    expect(whole!.json).toMatchObject({ prompt: '', private: true });
    expect(server.requests.map((r) => r.body).join('')).not.toContain('salary');
  });

  it('sends nothing for a prompt that is only a task notification', async () => {
    await hook('user-prompt-submit', {
      prompt: '<task-notification>\n<task-id>7</task-id> done\n</task-notification>',
    });
    expect(server.requests).toHaveLength(0);
  });

  it('injects prompt recall only when per-prompt injection is turned on', async () => {
    server.context.prompt = 'Earlier: the login test flakes because of a shared clock.';
    const off = await hook('user-prompt-submit', { prompt: 'why does the login test flake sometimes?' });
    expect(off.io.stdout).toBe('');
    expect(server.requests.some((r) => r.path.startsWith('/api/context/prompt'))).toBe(false);
    const on = await hook(
      'user-prompt-submit',
      { prompt: 'why does the login test flake sometimes?' },
      { ...machine(server.url).env, CAIRN_PROMPT_CONTEXT: '1' },
    );
    expect(on.out?.hookSpecificOutput).toEqual({
      hookEventName: 'UserPromptSubmit',
      additionalContext: server.context.prompt,
    });
  });
});

describe('pre-tool-use (Read)', () => {
  it('asks for the history of a large file and injects it next to the read', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'src'));
    writeFileSync(join(cwd, 'src', 'big.ts'), 'x'.repeat(2_000));
    server.context.file = 'This file has prior observations:\n#7 fixed the parser';
    const { out } = await hook('pre-tool-use', {
      cwd,
      tool_name: 'Read',
      tool_input: { file_path: join(cwd, 'src', 'big.ts') },
      tool_use_id: 'u1',
    });
    expect(out?.hookSpecificOutput).toEqual({ hookEventName: 'PreToolUse', additionalContext: server.context.file });
    const q = new URL(server.requests[0]!.path, 'http://x').searchParams;
    expect(q.getAll('path')).toEqual([join(cwd, 'src', 'big.ts'), 'src/big.ts']);
    expect(Number(q.get('mtime'))).toBeGreaterThan(0);
  });

  it('names the file relative to the git top level, not cwd, when Claude Code runs in a subfolder', async () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q'], { cwd: repo });
    mkdirSync(join(repo, 'packages', 'api', 'src'), { recursive: true });
    writeFileSync(join(repo, 'packages', 'api', 'src', 'server.ts'), 'x'.repeat(2_000));
    await hook('pre-tool-use', {
      cwd: join(repo, 'packages', 'api'),
      tool_name: 'Read',
      tool_input: { file_path: 'src/server.ts' },
    });
    const q = new URL(server.requests[0]!.path, 'http://x').searchParams;
    expect(q.getAll('path')).toEqual([join(repo, 'packages', 'api', 'src', 'server.ts'), 'packages/api/src/server.ts']);
  });

  it('stays silent for small files, missing files, secrets files and subagents', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'small.ts'), 'x'.repeat(1_499));
    writeFileSync(join(cwd, '.env'), 'x'.repeat(5_000));
    writeFileSync(join(cwd, 'big.ts'), 'x'.repeat(5_000));
    server.context.file = 'history';
    for (const [file, extra] of [
      ['small.ts', {}],
      ['gone.ts', {}],
      ['.env', {}],
      ['big.ts', { agent_id: 'a1' }],
    ] as const) {
      const r = await hook('pre-tool-use', {
        cwd,
        tool_name: 'Read',
        tool_input: { file_path: join(cwd, file) },
        ...extra,
      });
      expect(r.io.stdout).toBe('');
    }
    expect(server.requests).toHaveLength(0);
  });
});

describe('project root', () => {
  it('sends the git top level as project_root with every event, from any subfolder', async () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q'], { cwd: repo });
    mkdirSync(join(repo, 'web', 'src'), { recursive: true });
    const cwd = join(repo, 'web', 'src');
    await hook('user-prompt-submit', { session_id: 's-root', cwd, prompt: 'rename the widget store' });
    await hook('post-tool-use', {
      session_id: 's-root',
      cwd,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: 'a b',
      tool_use_id: 'r1',
    });
    await hook('stop', { session_id: 's-root', cwd, last_assistant_message: 'Renamed it.' });
    await hook('session-end', { session_id: 's-root', cwd, reason: 'exit' });
    expect(ingest().map((r) => r.json!.project_root)).toEqual([repo, repo, repo, repo]);
    expect(ingest().map((r) => r.json!.cwd)).toEqual([cwd, cwd, cwd, cwd]);
  });

  it('uses cwd as the root outside a repository', async () => {
    const cwd = tempDir();
    await hook('post-tool-use', {
      cwd,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: '',
      tool_use_id: 'r2',
    });
    expect(ingest()[0]!.json!.project_root).toBe(cwd);
  });
});

describe('post-tool-use-failure', () => {
  it('records a failed tool call (a command exiting non-zero) with its error, and skips a user interrupt', async () => {
    const failed = await hook('post-tool-use-failure', {
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: { command: 'npm test', description: 'Run tests' },
      tool_use_id: 'fail-1',
      error:
        'Exit code 1\nFAIL src/math.test.ts\n  expected 3, received -1 (token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH)',
    });
    expect(failed.code).toBe(0);
    expect(failed.io.stdout).toBe('');
    await hook('post-tool-use-failure', {
      tool_name: 'Bash',
      tool_input: { command: 'sleep 100' },
      tool_use_id: 'fail-2',
      error: 'Interrupted by user',
      is_interrupt: true,
    });
    const sent = ingest();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/api/sessions/observations');
    expect(sent[0]!.json).toMatchObject({
      tool_name: 'Bash',
      tool_use_id: 'fail-1',
      tool_response: { is_error: true },
    });
    const response = sent[0]!.json!.tool_response as { error: string };
    expect(response.error).toContain('expected 3, received -1');
    expect(response.error).not.toContain('sk-ant-api03');
  });
});

describe('post-tool-use', () => {
  it('accepts tool_response as an object, a string and a list', async () => {
    const shapes = [
      { stdout: 'ok', stderr: '', interrupted: false, isImage: false },
      'plain text result',
      [
        { type: 'text', text: 'first' },
        { type: 'text', text: 'second' },
      ],
    ];
    for (const [i, tool_response] of shapes.entries()) {
      await hook('post-tool-use', {
        tool_name: 'Bash',
        tool_input: { command: 'ls' },
        tool_response,
        tool_use_id: `shape-${i}`,
      });
    }
    expect(ingest().map((r) => r.json!.tool_response)).toEqual(shapes);
    expect(ingest().every((r) => r.path === '/api/sessions/observations')).toBe(true);
  });

  it('keeps Windows paths as they are and derives the project from the folder name', async () => {
    await hook('post-tool-use', {
      cwd: 'C:\\Users\\dev\\Widgets',
      tool_name: 'Edit',
      tool_input: { file_path: 'C:\\Users\\dev\\Widgets\\src\\app.ts', old_string: 'a', new_string: 'b' },
      tool_response: { filePath: 'C:\\Users\\dev\\Widgets\\src\\app.ts', success: true },
      tool_use_id: 'win',
    });
    const body = ingest()[0]!.json!;
    expect(body.project).toBe('local/widgets');
    expect((body.tool_input as Record<string, string>).file_path).toBe('C:\\Users\\dev\\Widgets\\src\\app.ts');
  });

  it('never sends a 1 MB Edit payload across the network', async () => {
    const original = `${'line of the original file\n'.repeat(40_000)}`;
    expect(original.length).toBeGreaterThan(1_000_000);
    const { code } = await hook('post-tool-use', {
      tool_name: 'Edit',
      tool_input: { file_path: '/repo/src/huge.ts', old_string: original, new_string: `${original}// end` },
      tool_response: {
        filePath: '/repo/src/huge.ts',
        oldString: original,
        newString: original,
        originalFile: original,
        structuredPatch: [],
      },
      tool_use_id: 'huge',
    });
    expect(code).toBe(0);
    const req = ingest()[0]!;
    expect(req.body.length).toBeLessThan(100_000);
    expect(String((req.json!.tool_input as Record<string, string>).old_string)).toMatch(
      /<elided chars="\d+" original_size_chars="\d+" reason="oversize"\/>/,
    );
  });

  it('skips framework chatter, cairn’s own tools, excluded projects and cairn’s own traffic', async () => {
    const excludedDir = join(tempDir(), 'clients', 'acme');
    mkdirSync(excludedDir, { recursive: true });
    const base = machine(server.url).env;
    await hook('post-tool-use', { tool_name: 'TodoWrite', tool_input: { todos: [] }, tool_response: {} });
    await hook('post-tool-use', { tool_name: 'mcp__cairn__search', tool_input: { query: 'x' }, tool_response: 'r' });
    await hook(
      'post-tool-use',
      { cwd: excludedDir, tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: 'r' },
      { ...base, CAIRN_EXCLUDE_PROJECTS: '**/clients/*' },
    );
    await hook(
      'post-tool-use',
      { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: 'r' },
      { ...base, CAIRN_INTERNAL: '1' },
    );
    expect(server.requests).toHaveLength(0);
    await hook(
      'post-tool-use',
      { tool_name: 'TodoWrite', tool_input: {}, tool_response: {} },
      { ...base, CAIRN_SKIP_TOOLS: 'Glob' },
    );
    expect(server.requests).toHaveLength(1);
  });

  it('passes subagent fields through', async () => {
    await hook('post-tool-use', {
      tool_name: 'Grep',
      tool_input: { pattern: 'x' },
      tool_response: 'r',
      agent_id: 'agent-7',
      agent_type: 'Explore',
    });
    expect(ingest()[0]!.json).toMatchObject({ agent_id: 'agent-7', agent_type: 'Explore' });
  });
});

describe('stop and session-end', () => {
  it('sends the last assistant message, tag-stripped', async () => {
    await hook('stop', {
      last_assistant_message: 'Fixed it. <private>internal note</private> Tests pass.',
      stop_hook_active: false,
    });
    expect(ingest()[0]).toMatchObject({ path: '/api/sessions/summarize' });
    expect(ingest()[0]!.json!.last_assistant_message).toBe('Fixed it.  Tests pass.');
  });

  it('falls back to the transcript for the last assistant text', async () => {
    const dir = tempDir();
    const transcript = join(dir, 't.jsonl');
    writeFileSync(
      transcript,
      [
        { type: 'user', message: { role: 'user', content: 'hi' } },
        { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'The answer is 42.' }] } },
        {
          type: 'assistant',
          message: { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: {} }] },
        },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    await hook('stop', { transcript_path: transcript });
    expect(ingest()[0]!.json!.last_assistant_message).toBe('The answer is 42.');
  });

  it('spools the prompt’s tool calls from the transcript before the summary, under the ids PostToolUse uses', async () => {
    const env = machine(server.url).env;
    const dir = tempDir();
    const sid = `sess-backfill-${Date.now()}`;
    const transcript = join(dir, 't.jsonl');
    const user = (content: unknown, extra: Record<string, unknown> = {}) => ({
      type: 'user',
      sessionId: sid,
      message: { role: 'user', content },
      ...extra,
    });
    const assistant = (content: unknown) => ({
      type: 'assistant',
      sessionId: sid,
      message: { role: 'assistant', content },
    });
    const call = (id: string, name: string, input: unknown) => assistant([{ type: 'tool_use', id, name, input }]);
    const result = (id: string, text: string) => user([{ type: 'tool_result', tool_use_id: id, content: text }]);
    writeFileSync(
      transcript,
      [
        user('an earlier request', { promptId: 'pid-old' }),
        call('tu-old', 'Bash', { command: 'echo earlier' }),
        result('tu-old', 'earlier'),
        assistant([{ type: 'text', text: 'Done earlier.' }]),
        user('print the run number', { promptId: 'pid-now' }),
        call('tu-1', 'Bash', { command: 'echo run-1' }),
        result('tu-1', 'run-1'),
        call('tu-own', 'mcp__cairn__search', { query: 'x' }),
        result('tu-own', 'memory'),
        call('tu-2', 'Bash', { command: 'echo last' }),
        result('tu-2', 'last'),
        assistant([{ type: 'text', text: 'Printed it.' }]),
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    // The first call's PostToolUse got through; the last one's was ended with the CLI before it spooled.
    await hook(
      'post-tool-use',
      {
        session_id: sid,
        prompt_id: 'pid-now',
        tool_name: 'Bash',
        tool_input: { command: 'echo run-1' },
        tool_response: 'run-1',
        tool_use_id: 'tu-1',
      },
      env,
    );
    const live = [...server.stored.entries()].find(([, e]) => e.tool_use_id === 'tu-1')![0];
    await hook(
      'stop',
      { session_id: sid, prompt_id: 'pid-now', last_assistant_message: 'Printed it.', transcript_path: transcript },
      env,
    );

    const sent = server.requests
      .filter((r) => r.method === 'POST')
      .flatMap((r) =>
        r.path === '/api/events/batch'
          ? (r.json!.events as Array<Record<string, unknown>>)
          : [{ kind: r.path.split('/').pop(), ...r.json }],
      );
    const ofSession = sent.filter((e) => e.session_id === sid);
    // tu-1 was spooled by its own hook, so Stop does not send it again; every event names the current prompt.
    expect(ofSession.map((e) => e.tool_use_id ?? e.last_assistant_message)).toEqual(['tu-1', 'tu-2', 'Printed it.']);
    expect(ofSession.every((e) => e.prompt_id === 'pid-now')).toBe(true);
    expect(JSON.stringify(ofSession[1]!.tool_input)).toContain('echo last');
    expect([...server.stored.values()].filter((e) => e.session_id === sid && e.tool_use_id)).toHaveLength(2);
    // Without this machine's note of it (another machine's hook, a note that failed) the repeat carries the live
    // event's id, so the server keeps one.
    rmSync(join(env.HOME!, '.local', 'state', 'cairn', 'seen'), { recursive: true, force: true });
    const before = server.requests.length;
    await hook(
      'stop',
      { session_id: sid, prompt_id: 'pid-now', last_assistant_message: 'Printed it.', transcript_path: transcript },
      env,
    );
    const again = server.requests
      .slice(before)
      .filter((r) => r.method === 'POST')
      .flatMap((r) =>
        r.path === '/api/events/batch' ? (r.json!.events as Array<Record<string, unknown>>) : [r.json!],
      );
    expect(again.find((e) => e.tool_use_id === 'tu-1')!.event_id).toBe(live);
    expect([...server.stored.values()].filter((e) => e.session_id === sid && e.tool_use_id)).toHaveLength(2);
  });

  it('sends every tool call of a long prompt whose PostToolUse hooks never arrived (no sender for the HTTP hook), and none twice', async () => {
    const env = machine(server.url).env;
    const dir = tempDir();
    const sid = `sess-long-${Date.now()}`;
    const transcript = join(dir, 't.jsonl');
    const lines: unknown[] = [
      { type: 'user', sessionId: sid, message: { role: 'user', content: 'run all the checks' }, promptId: 'p-long' },
    ];
    for (let i = 0; i < 30; i++) {
      lines.push({
        type: 'assistant',
        sessionId: sid,
        message: {
          role: 'assistant',
          content: [{ type: 'tool_use', id: `tl-${i}`, name: 'Bash', input: { command: `echo check-${i}` } }],
        },
      });
      lines.push({
        type: 'user',
        sessionId: sid,
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `tl-${i}`, content: `check-${i} ok` }] },
      });
    }
    lines.push({
      type: 'assistant',
      sessionId: sid,
      message: { role: 'assistant', content: [{ type: 'text', text: 'All 30 checks pass.' }] },
    });
    writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n'));
    // Only the first five calls' hooks got through.
    for (let i = 0; i < 5; i++)
      await hook(
        'post-tool-use',
        {
          session_id: sid,
          prompt_id: 'p-long',
          tool_name: 'Bash',
          tool_input: { command: `echo check-${i}` },
          tool_response: `check-${i} ok`,
          tool_use_id: `tl-${i}`,
        },
        env,
      );
    await hook(
      'stop',
      {
        session_id: sid,
        prompt_id: 'p-long',
        last_assistant_message: 'All 30 checks pass.',
        transcript_path: transcript,
      },
      env,
    );
    const sent = server.requests
      .filter((r) => r.method === 'POST')
      .flatMap((r) =>
        r.path === '/api/events/batch' ? (r.json!.events as Array<Record<string, unknown>>) : [r.json ?? {}],
      )
      .filter((e) => e.session_id === sid && e.tool_use_id);
    expect(sent.map((e) => e.tool_use_id)).toEqual(Array.from({ length: 30 }, (_, i) => `tl-${i}`));
  });

  it('sends nothing for a re-entered stop, a subagent stop, or a wholly private message', async () => {
    await hook('stop', { last_assistant_message: 'x', stop_hook_active: true });
    await hook('stop', { last_assistant_message: 'x', agent_id: 'a' });
    await hook('stop', { last_assistant_message: '<private>secret plans</private>' });
    expect(server.requests).toHaveLength(0);
  });

  it('ends the session with its reason', async () => {
    await hook('session-end', { reason: 'prompt_input_exit' });
    expect(ingest()[0]).toMatchObject({ path: '/api/sessions/end' });
    expect(ingest()[0]!.json!.reason).toBe('prompt_input_exit');
  });

  it('finishes session-end on its own budget and spools the event when the server hangs', async () => {
    server.handler = (_req, _res) => true; // accept the connection, never answer
    const env = machine(server.url).env;
    // The hook's own budget ends the wait (the server never answers); its speed is measured in bench/.
    const { code } = await hook('session-end', { reason: 'other' }, env);
    expect(code).toBe(0);
    const spooled = readFileSync(join(env.HOME!, '.local', 'state', 'cairn', 'spool.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(spooled.map((l) => JSON.parse(l).kind)).toEqual(['end']);
  });
});

describe('stop (synchronous: Claude Code waits for it)', () => {
  it('gives up on a hanging server within its budget, keeps the summary spooled, and the next hook delivers it', async () => {
    server.handler = (_req, _res) => true; // accept the connection, never answer
    const env = machine(server.url).env;
    // Returning at all shows it gave up (the server never answers); the wait is the stop budget, and its wall
    // time is measured in bench/hooks-client.bench.mjs, not asserted here.
    const { code } = await hook(
      'stop',
      { last_assistant_message: 'Summary that must survive.', prompt_id: 'p-stop' },
      env,
    );
    expect(code).toBe(0);
    expect(BUDGET_MS.stop).toBeLessThanOrEqual(1_000);
    const spoolFile = join(env.HOME!, '.local', 'state', 'cairn', 'spool.jsonl');
    expect(
      readFileSync(spoolFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).kind),
    ).toEqual(['summarize']);
    server.handler = undefined;
    server.requests.length = 0;
    await hook('session-end', { reason: 'other', prompt_id: 'p-stop' }, env);
    // Both go out together, oldest first: the spooled summary, then the end.
    const batch = server.requests.find((r) => r.path === '/api/events/batch');
    expect((batch!.json!.events as Array<Record<string, unknown>>).map((e) => [e.kind, e.prompt_id])).toEqual([
      ['summarize', 'p-stop'],
      ['end', 'p-stop'],
    ]);
    expect(readFileSync(spoolFile, 'utf8')).toBe('');
  });
});

describe('hook mode never fails', () => {
  it('exits 0 and prints nothing for malformed input, unknown events and a missing login', async () => {
    const env = machine(null).env;
    for (const [event, stdin] of [
      ['post-tool-use', 'not json'],
      ['no-such-event', '{}'],
      ['post-tool-use', hookJson({ tool_name: 'Bash', tool_input: {}, tool_response: '' })],
    ]) {
      const io = memIo({ env, stdin });
      expect(await run(['hook', event!], io)).toBe(0);
      expect(io.stdout).toBe('');
    }
  });
});
