// `cairn import`: a Claude Code transcript replayed as history, idempotently, with the hooks' privacy rules.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/run';
import { fakeServer, hookJson, machine, memIo, tempDir, type FakeServer } from '../support';

let server: FakeServer;
beforeAll(async () => {
  server = await fakeServer();
});
afterAll(() => server.close());

const lines = [
  {
    type: 'user',
    sessionId: 'imp-1',
    cwd: '/nowhere/widgets',
    timestamp: '2026-10-01T10:00:00Z',
    uuid: 'u1',
    promptId: 'pr-1',
    message: { role: 'user', content: 'rename the widget table, password=hunter2hunter2' },
  },
  {
    type: 'assistant',
    sessionId: 'imp-1',
    timestamp: '2026-10-01T10:00:05Z',
    uuid: 'a1',
    message: {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'grep -r widget_table' } },
      ],
    },
  },
  {
    type: 'user',
    sessionId: 'imp-1',
    timestamp: '2026-10-01T10:00:06Z',
    uuid: 'u2',
    toolUseResult: { stdout: 'db.sql: widget_table', stderr: '' },
    message: {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'db.sql: widget_table' }],
    },
  },
  {
    type: 'assistant',
    sessionId: 'imp-1',
    timestamp: '2026-10-01T10:00:09Z',
    uuid: 'a2',
    message: { role: 'assistant', content: [{ type: 'text', text: 'Renamed it in db.sql.' }] },
  },
  {
    type: 'user',
    sessionId: 'imp-1',
    timestamp: '2026-10-01T10:01:00Z',
    uuid: 'u3',
    isMeta: true,
    message: { role: 'user', content: 'meta' },
  },
];

describe('cairn import', () => {
  it('sends prompts, tool calls, turn summaries and the end, and a second import stores nothing new', async () => {
    const { env } = machine(server.url);
    const file = join(tempDir(), 'imp-1.jsonl');
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{broken line\n`);
    const io = memIo({ env });
    expect(await run(['import', file], io)).toBe(0);
    expect(io.stdout).toContain('4 events sent');
    const stored = [...server.stored.values()];
    expect(stored.map((e) => e.kind)).toEqual(['init', 'observation', 'summarize', 'end']);
    expect(stored[0]).toMatchObject({
      session_id: 'imp-1',
      project: 'local/widgets',
      occurred_at: '2026-10-01T10:00:00Z',
    });
    expect(stored[1]).toMatchObject({
      tool_name: 'Bash',
      tool_response: { stdout: 'db.sql: widget_table', stderr: '' },
    });
    expect(stored[2]).toMatchObject({ last_assistant_message: 'Renamed it in db.sql.' });
    expect(JSON.stringify(stored)).not.toContain('hunter2hunter2');
    expect(await run(['import', file], memIo({ env }))).toBe(0);
    expect(server.stored.size).toBe(4);
  });

  it('gives a tool call the same event id live and imported, so importing a recorded session adds nothing', async () => {
    const { env } = machine(server.url);
    const before = server.stored.size;
    await run(
      ['hook', 'post-tool-use'],
      memIo({
        env,
        stdin: hookJson({
          session_id: 'imp-1',
          tool_name: 'Bash',
          tool_input: { command: 'grep -r widget_table' },
          tool_response: 'x',
          tool_use_id: 'toolu_1',
        }),
      }),
    );
    await run(
      ['hook', 'stop'],
      memIo({ env, stdin: hookJson({ session_id: 'imp-1', last_assistant_message: 'Renamed it in db.sql.' }) }),
    );
    expect(server.stored.size).toBe(before);
  });
});
