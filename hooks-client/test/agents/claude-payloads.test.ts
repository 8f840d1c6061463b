// The hook payloads the real Claude Code CLI sent (test/e2e/claude-code-payloads.json, recorded from the
// pinned version by `npm run claude:payloads`), each run through the client: every field cairn relies on is
// read from where that version puts it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, machine, memIo, tempDir, type FakeServer } from '../support';

interface Sample {
  claude_code: string;
  events: Record<string, Record<string, unknown>>;
}

const sample = JSON.parse(
  readFileSync(new URL('../../../test/e2e/claude-code-payloads.json', import.meta.url), 'utf8'),
) as Sample;

// Claude Code's event names and the `cairn hook` argument `cairn install` gives each.
const HOOK_ARG: Record<string, string> = {
  SessionStart: 'session-start',
  UserPromptSubmit: 'user-prompt-submit',
  PreToolUse: 'pre-tool-use',
  PostToolUse: 'post-tool-use',
  PostToolUseFailure: 'post-tool-use-failure',
  Stop: 'stop',
  SessionEnd: 'session-end',
};

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());

/** The recorded payload with its placeholders filled in for this machine. */
function payload(key: string, repo: string, home: string): Record<string, unknown> {
  const text = JSON.stringify(sample.events[key]).split('$REPO').join(repo).split('$HOME').join(home);
  return JSON.parse(text) as Record<string, unknown>;
}

async function send(key: string): Promise<Record<string, unknown> | null> {
  const { env, home } = machine(server.url);
  const repo = tempDir('cairn-payload-repo-');
  const p = payload(key, repo, home);
  const before = server.requests.length;
  expect(await run(['hook', HOOK_ARG[String(p.hook_event_name)]!], memIo({ env, stdin: JSON.stringify(p) }))).toBe(0);
  return server.requests.slice(before).find((r) => r.method === 'POST')?.json ?? null;
}

describe(`hook payloads recorded from Claude Code ${sample.claude_code}`, () => {
  it('cover every event cairn installs a hook for', () => {
    const events = new Set(Object.values(sample.events).map((p) => String(p.hook_event_name)));
    for (const e of Object.keys(HOOK_ARG)) expect(events, e).toContain(e);
  });

  it('carry the session, the prompt id and the tool call into the observation', async () => {
    const p = sample.events['PostToolUse:Bash']!;
    const sent = await send('PostToolUse:Bash');
    expect(sent).toMatchObject({
      session_id: p.session_id,
      prompt_id: p.prompt_id,
      tool_name: 'Bash',
      tool_use_id: p.tool_use_id,
      tool_input: p.tool_input,
    });
    expect(JSON.stringify(sent!.tool_response)).toContain('passing');
  });

  it('record a failed command with the error Claude Code reports', async () => {
    const p = sample.events['PostToolUseFailure:Bash']!;
    const sent = await send('PostToolUseFailure:Bash');
    expect(sent).toMatchObject({
      tool_name: 'Bash',
      prompt_id: p.prompt_id,
      tool_response: { is_error: true, error: p.error },
    });
  });

  it('send the prompt, the last assistant message and the end reason with their prompt id', async () => {
    expect(await send('UserPromptSubmit')).toMatchObject({
      prompt: sample.events.UserPromptSubmit!.prompt,
      prompt_id: sample.events.UserPromptSubmit!.prompt_id,
    });
    expect(await send('Stop')).toMatchObject({
      last_assistant_message: sample.events.Stop!.last_assistant_message,
      prompt_id: sample.events.Stop!.prompt_id,
    });
    expect(await send('SessionEnd')).toMatchObject({
      reason: sample.events.SessionEnd!.reason,
      prompt_id: sample.events.SessionEnd!.prompt_id,
    });
  });

  it('send an Edit with its absolute file path and the folder it lies under as project_root', async () => {
    const sent = await send('PostToolUse:Edit');
    expect((sent!.tool_input as { file_path: string }).file_path).toMatch(/notes\.txt$/);
    expect(join(String(sent!.project_root), 'notes.txt')).toBe((sent!.tool_input as { file_path: string }).file_path);
  });
});
