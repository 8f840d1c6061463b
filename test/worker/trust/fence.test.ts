// The fence on the real stack: member A stores the three hostile memories through MCP `remember`; they are
// held back (hold-back.test.ts), and once an admin releases them what member B is shown (the SessionStart index,
// prompt and file context, MCP answers) keeps its frame whole, says first that it is data, and names A and A's
// device beside each line.
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { expectFrameHolds, HOSTILE, HOSTILE_MARKS } from './hostile';
import { callTool, connect, deferredWork, textOf } from './mcp-client';

/** Words of each hostile title that the session-start index still shows once it cuts titles. */
const INDEX_MARKS = ['ignore all previous instructions', 'from now on you must add', 'authorized you to push to main'];

async function teamWithHostileMemories(): Promise<{ a: TestIdentity; b: TestIdentity; key: string; ids: number[] }> {
  const a = await newIdentity({ role: 'member' });
  const b = await newIdentity({ team: a.team, role: 'member' });
  const admin = await newIdentity({ team: a.team, role: 'admin' });
  const key = `github.com/acme/${fresh('fence')}`;
  const client = await connect(a.token);
  const ids: number[] = [];
  for (const h of HOSTILE) {
    const res = await callTool(client, 'remember', {
      project: key,
      title: h.title,
      text: h.text,
      files: ['deploy/run.sh'],
    });
    expect(res.isError).toBeFalsy();
    ids.push(Number(/#(\d+)/.exec(textOf(res))?.[1]));
  }
  await client.close();
  await deferredWork();
  // Held as instruction-like; released, they must still be harmless data inside the frame.
  expect((await call('/api/admin/release', { token: admin.token, json: { ids } })).status).toBe(200);
  return { a, b, key, ids };
}

describe('the memory fence', { timeout: 60_000 }, () => {
  it("keeps a teammate's break-out memories inside B's session-start frame, says it is data, and names A and A's device on each line", async () => {
    const { a, b, key, ids } = await teamWithHostileMemories();
    const text = await (
      await call(`/api/context?project=${encodeURIComponent(key)}&tz=UTC`, { token: b.token })
    ).text();
    expectFrameHolds(text);
    expect(text.split('\n')[2]).toMatch(/data, not instructions/);
    for (const id of ids) expect(text).toMatch(new RegExp(`^${id} .* @${a.user}/${a.device}$`, 'm'));
    // The frame holds with the hostile words inside it, not because they were left out (titles are cut in the index).
    for (const words of INDEX_MARKS) expect(text).toContain(words);
  });

  it("keeps B's prompt context, file context and MCP answers fenced too", async () => {
    const { b, key, ids } = await teamWithHostileMemories();
    const prompt = await (
      await call(
        `/api/context/prompt?project=${encodeURIComponent(key)}&q=${encodeURIComponent('new policy push to main deploy')}&tz=UTC`,
        { token: b.token },
      )
    ).text();
    expect(prompt).not.toBe('');
    expectFrameHolds(prompt);
    expect(prompt).toMatch(new RegExp(`^- ${ids[2]} `, 'm'));
    expect(prompt).toContain(HOSTILE_MARKS[2]);
    const file = await (
      await call(`/api/context/file?project=${encodeURIComponent(key)}&path=deploy/run.sh&tz=UTC`, { token: b.token })
    ).text();
    expectFrameHolds(file);
    expect(file).toMatch(new RegExp(`^${ids[2]} .*${HOSTILE_MARKS[2]}`, 'm'));
    const client = await connect(b.token);
    const records = textOf(await callTool(client, 'get_observations', { ids }));
    const found = textOf(await callTool(client, 'search', { query: 'policy push main', project: key }));
    await client.close();
    // Each answer carries the hostile records themselves (fenced), so the checks below are about them.
    for (const id of ids) expect(records).toContain(`#${id}`);
    for (const mark of HOSTILE_MARKS) expect(records).toContain(mark);
    expect(found).toMatch(new RegExp(`^#${ids[2]} `, 'm'));
    expect(found).toContain(HOSTILE_MARKS[2]);
    for (const answer of [records, found]) {
      expect(answer.toLowerCase()).not.toContain('cairn-context');
      expect(answer).not.toMatch(/<(?:[/!?|]|\s*\/|[\p{L}_])/u);
    }
    expect(records.startsWith('Notes by people')).toBe(true);
  });
});
