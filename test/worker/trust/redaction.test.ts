// Server-side redaction: secrets that reach the Worker by a route that skips the client's redaction (MCP
// remember, import, a raw ingest call) are stored redacted, read from the D1 tables themselves, and each hit
// is counted in the audit log by kind only; the observer model (the fake on 127.0.0.1, which records every
// request) is never sent a tool call's input or output or an assistant message with a secret in it.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { importNow } from '../support/import';
import { idsOf } from '../support/seed';
import { base, initEvent, recorded, script, send, settled, toolEvent, waitFor } from '../pipeline/support';
import { callTool, connect, deferredWork } from './mcp-client';

// Built from parts, so no scanner takes this file for a leak.
const AWS = ['AKIA', 'Q3EGRQ7HXMZ4TN2K'].join('');
const GITHUB = ['ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');
const SLACK = ['xoxb-', '123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'].join('');
const SECRETS = [AWS, GITHUB, SLACK];
const KINDS = { 'aws-access-key': 1, 'github-token': 1, 'slack-token': 1 };

const secretText = (word: string) => `Deploy ${word} notes: aws ${AWS} then gh ${GITHUB} and slack ${SLACK} in CI.`;

async function storedTexts(teamId: number): Promise<string> {
  const obs = await env.DB.prepare(
    'SELECT title, subtitle, narrative, facts, concepts, cjk_terms FROM observations WHERE team_id = ?',
  )
    .bind(teamId)
    .all();
  const sums = await env.DB.prepare(
    'SELECT request, investigated, learned, completed, next_steps, notes FROM summaries WHERE team_id = ?',
  )
    .bind(teamId)
    .all();
  const prompts = await env.DB.prepare('SELECT text, cjk_terms FROM prompts WHERE team_id = ?').bind(teamId).all();
  return JSON.stringify([obs.results, sums.results, prompts.results]);
}

/** Redaction audit rows (and the import's own row), raw detail text kept to search it for the values. */
async function redactionAudits(
  teamId: number,
): Promise<{ target: string; detail: Record<string, unknown>; raw: string }[]> {
  const rows = await env.DB.prepare(
    "SELECT target, detail FROM audit_log WHERE team_id = ? AND (action = 'redaction' OR action = 'transfer.import') ORDER BY id",
  )
    .bind(teamId)
    .all<{ target: string; detail: string }>();
  return rows.results.map((r) => ({
    target: r.target,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
    raw: r.detail,
  }));
}

describe('server-side redaction', { timeout: 30_000 }, () => {
  it('stores an AWS key id, a GitHub token and a Slack bot token sent through MCP remember redacted, and audits the kinds only', async () => {
    const a = await newIdentity();
    const { teamId } = await idsOf(a);
    const client = await connect(a.token);
    const word = fresh('deploy');
    const res = await callTool(client, 'remember', {
      project: 'github.com/acme/widgets',
      text: secretText(word),
      title: `Keys for ${word}: ${GITHUB}`,
      facts: [`slack ${SLACK}`],
    });
    expect(res.isError).toBeFalsy();
    await client.close();
    await deferredWork();
    const stored = await storedTexts(teamId);
    expect(stored).toContain(word);
    for (const s of SECRETS) expect(stored).not.toContain(s);
    expect(stored).toContain('[REDACTED:aws-access-key]');
    expect(stored).toContain('[REDACTED:github-token]');
    expect(stored).toContain('[REDACTED:slack-token]');
    const audits = await redactionAudits(teamId);
    expect(audits.map(({ target, detail }) => ({ target, detail }))).toEqual([
      { target: 'route:remember', detail: { kinds: { 'aws-access-key': 1, 'github-token': 2, 'slack-token': 2 } } },
    ]);
    for (const s of SECRETS) expect(JSON.stringify(audits)).not.toContain(s.slice(4, 14));
    // And what the API hands back is the stored text.
    const api = await (await call('/api/observations?project=github.com%2Facme%2Fwidgets', { token: a.token })).text();
    for (const s of SECRETS) expect(api).not.toContain(s);
  });

  it('stores the same secrets sent in an import file redacted in observations, summaries and prompts, counted in the import audit row', async () => {
    const a = await newIdentity();
    const { teamId } = await idsOf(a);
    const word = fresh('imp');
    const sk = fresh('s');
    const at = { session_key: sk, prompt_id: null, author: a.user, created_at: 1_780_000_000_000 };
    const lines = [
      {
        kind: 'project',
        key: `github.com/acme/${word}`,
        visibility: 'team',
        owner: a.user,
        created_at: 1_780_000_000_000,
      },
      {
        kind: 'session',
        session_key: sk,
        project: `github.com/acme/${word}`,
        user: a.user,
        platform: 'claude-code',
        prompt_count: 1,
        started_at: 1_780_000_000_000,
        ended_at: null,
      },
      { kind: 'prompt', ...at, prompt_number: 1, text: secretText(word) },
      {
        kind: 'observation',
        ...at,
        prompt_number: 1,
        type: 'discovery',
        title: `CI keys ${word}`,
        subtitle: null,
        facts: [secretText(word)],
        narrative: secretText(word),
        concepts: [],
        files_read: [],
        files_modified: [],
        discovery_tokens: 0,
        content_hash: fresh('h'),
        agent_id: null,
        agent_type: null,
        source: 'observer',
      },
      {
        kind: 'summary',
        ...at,
        prompt_number: 1,
        request: secretText(word),
        investigated: '',
        learned: '',
        completed: '',
        next_steps: '',
        notes: null,
        content_hash: fresh('h'),
      },
    ];
    const res = await importNow(a.token, lines.map((l) => JSON.stringify(l)).join('\n'));
    expect(res.status).toBe(200);
    const stored = await storedTexts(teamId);
    expect(stored).toContain(word);
    for (const s of SECRETS) expect(stored).not.toContain(s);
    const [audit] = await redactionAudits(teamId);
    // prompt, narrative, one fact, summary request: four texts, each with one of every kind.
    expect(audit!.detail.redactions).toEqual({ 'aws-access-key': 4, 'github-token': 4, 'slack-token': 4 });
    for (const s of SECRETS) expect(audit!.raw).not.toContain(s.slice(4, 14));
  });

  it('redacts a prompt sent straight to the ingest route by a client that skipped its own redaction', async () => {
    const a = await newIdentity();
    const { teamId } = await idsOf(a);
    const word = fresh('raw');
    const sid = fresh('s');
    expect((await send(a.token, 'init', initEvent(sid, secretText(word)))).status).toBe(202);
    const stored = await storedTexts(teamId);
    expect(stored).toContain(word);
    for (const s of SECRETS) expect(stored).not.toContain(s);
    expect((await redactionAudits(teamId)).map(({ target, detail }) => ({ target, detail }))).toEqual([
      { target: 'route:ingest', detail: { kinds: KINDS } },
    ]);
  });

  it("never shows the observer model a tool call's input or output, or the last assistant message, unredacted", async () => {
    const a = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('redact');
    await script(scenario, []);
    const word = fresh('obs');
    expect((await send(a.token, 'init', initEvent(sid, `Deploy ${word}`))).status).toBe(202);
    const sent = await send(a.token, 'observations', {
      ...toolEvent(sid, 'deploy'),
      tool_input: { command: `SCENARIO:${scenario} deploy ${word} --key ${AWS}`, env: { GITHUB_TOKEN: GITHUB } },
      tool_response: { stdout: `deployed ${word} with ${SLACK}`, exit_code: 0 },
    });
    expect(sent.status).toBe(202);
    const summary = { ...base(sid), event_id: fresh('ev'), last_assistant_message: `Done: ${word} uses ${GITHUB}.` };
    expect((await send(a.token, 'summarize', summary)).status).toBe(202);
    await waitFor(a.token, sid, (s) => settled(s) && s.turns >= 1);
    // Everything the fake model received for this session, system prompt and history included.
    const requests = await recorded(scenario);
    expect(requests.length).toBeGreaterThanOrEqual(1);
    const seen = JSON.stringify(requests.map((r) => r.body));
    expect(seen).toContain(word);
    expect(seen).toContain(`Done: ${word} uses`);
    for (const secret of SECRETS) expect(seen).not.toContain(secret);
    for (const kind of Object.keys(KINDS)) expect(seen).toContain(`[REDACTED:${kind}]`);
  });
});
