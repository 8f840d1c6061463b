// From hook events to D1 rows through the real Anthropic SDK, answered by the scripted fake on 127.0.0.1.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import { createHeuristicProvider } from '../../../src/observer/providers/heuristic';
import { defaultAfterStore } from '../../../src/store/after-store';
import { indexTurn } from '../../../src/vectors/index-records';
import {
  base,
  countRows,
  insideSession,
  initEvent,
  lastUserText,
  recorded,
  release,
  script,
  send,
  sessionStub,
  settled,
  status,
  toolEvent,
  waitFor,
} from './support';

interface ObsRow {
  project_id: number;
  session_id: number;
  prompt_number: number;
  title: string;
  created_at: number;
  author_user_id: number;
  device_id: number | null;
  generation_id: string | null;
  discovery_tokens: number;
}

const observationsOf = async (sessionKey: string) =>
  (
    await env.DB.prepare(
      `SELECT o.project_id, o.session_id, o.prompt_number, o.title, o.created_at, o.author_user_id, o.device_id, o.generation_id, o.discovery_tokens
         FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ? ORDER BY o.created_at, o.id`,
    )
      .bind(sessionKey)
      .all<ObsRow>()
  ).results;

describe('the observation pipeline end to end', { timeout: 30_000 }, () => {
  it('files observations under the right project, author, device, prompt and event time', async () => {
    const id = await newIdentity();
    const ids = await idsOf(id);
    const sid = fresh('s');
    const scenario = fresh('e2e');
    await script(scenario, []);
    const t0 = Date.UTC(2026, 10, 30, 9, 0, 0);
    // Events are filed under the prompt during which they happened, so the prompt starts before them.
    await send(id.token, 'init', { ...initEvent(sid, 'Make the build green'), occurred_at: t0 - 1_000 });
    await send(id.token, 'observations', { ...toolEvent(sid, `SCENARIO:${scenario} npm run build`), occurred_at: t0 });
    await send(id.token, 'observations', {
      ...toolEvent(sid, 'npm test'),
      occurred_at: new Date(t0 + 5_000).toISOString(),
    });
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 2);
    expect(done.dead_letters).toEqual([]);

    const project = await env.DB.prepare(
      "SELECT id FROM projects WHERE team_id = ? AND key = 'github.com/acme/widgets'",
    )
      .bind(ids.teamId)
      .first<{ id: number }>();
    const rows = await observationsOf(sid);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r).toMatchObject({
        project_id: project!.id,
        prompt_number: 1,
        author_user_id: ids.userId,
        device_id: ids.deviceId,
      });
      expect(r.generation_id).toEqual(expect.any(String));
      expect(r.discovery_tokens).toBeGreaterThan(0);
    }
    expect(rows.map((r) => r.created_at).sort()).toEqual([t0, t0 + 5_000]);

    const requests = await recorded(scenario);
    expect(requests.length).toBeGreaterThanOrEqual(1);
    const first = requests[0]!;
    expect(first.path).toBe('/v1/messages');
    expect(first.body.model).toEqual(expect.any(String));
    expect(JSON.stringify(first.body.system)).toContain('"cache_control":{"type":"ephemeral"}');
    expect(lastUserText(first)).toContain('<observed_from_primary_session>');
    expect(lastUserText(first)).toContain('npm run build');
  });

  it('keeps events of prompt 1 under prompt 1 when prompt 2 arrives while they are in flight', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('snap');
    // The observer holds its answer until released: the first turn stays in flight while the rest arrives.
    await script(scenario, [], 0, { hold: true });
    await send(id.token, 'init', initEvent(sid, 'first request'));
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} echo one`));
    await waitFor(id.token, sid, (s) => s.in_flight > 0);
    await send(id.token, 'observations', toolEvent(sid, 'echo two'));
    await send(id.token, 'init', initEvent(sid, 'second request'));
    await send(id.token, 'observations', toolEvent(sid, 'echo three'));
    expect((await status(id.token, sid)).in_flight).toBe(1);
    await release(scenario);
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored >= 3, 20_000);
    const rows = await observationsOf(sid);
    const byCommand = (word: string) => rows.find((r) => r.title.includes(word))?.prompt_number;
    expect([byCommand('echo one'), byCommand('echo two'), byCommand('echo three')]).toEqual([1, 1, 2]);
  });

  it('truncates an oversized tool response before it reaches the observer', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('trunc');
    await script(scenario, []);
    const huge = `HEAD-${'a'.repeat(20_000)}${'b'.repeat(20_000)}-TAIL`;
    await send(id.token, 'observations', {
      ...toolEvent(sid, `SCENARIO:${scenario} cat big.log`),
      tool_response: huge,
    });
    await waitFor(id.token, sid, settled);
    const text = lastUserText((await recorded(scenario))[0]!);
    expect(text).toContain('HEAD-');
    expect(text).toContain('-TAIL');
    expect(text).toContain('<elided');
    expect(text.length).toBeLessThan(huge.length);
  });

  it('summarises a prompt only after its pending tool events, and stores the summary', async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('sum');
    // The first turn is held in flight while the rest arrives, the late hook after the summary request.
    await script(scenario, [], 0, { hold: true });
    await send(id.token, 'init', initEvent(sid, 'Tidy the README'));
    await send(id.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} edit README`));
    await waitFor(id.token, sid, (s) => s.in_flight > 0);
    await send(id.token, 'observations', toolEvent(sid, 'git diff'));
    await send(id.token, 'summarize', {
      ...base(sid),
      event_id: fresh('ev'),
      last_assistant_message: 'README tidied.',
    });
    await send(id.token, 'observations', toolEvent(sid, 'late async hook'));
    await release(scenario);
    await waitFor(id.token, sid, settled, 20_000);
    const requests = await recorded(scenario);
    const kinds = requests.map((r) =>
      lastUserText(r).includes('<observed_from_primary_session>') ? 'tools' : 'summary',
    );
    expect(kinds[kinds.length - 1]).toBe('summary');
    expect(requests.map(lastUserText).join('\n')).toContain('late async hook');
    const summary = await env.DB.prepare(
      'SELECT s.request, s.prompt_number FROM summaries s JOIN sessions x ON x.id = s.session_id WHERE x.session_key = ?',
    )
      .bind(sid)
      .first();
    expect(summary).toEqual({ request: 'Scripted request', prompt_number: 1 });
  });

  it('embeds stored observations for semantic search off the critical path', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    // The production after-store steps, with a signal when they are done (they run after the answer).
    let afterStoreDone!: () => void;
    const finished = new Promise<void>((resolve) => (afterStoreDone = resolve));
    await insideSession(sessionStub(teamId, sid), (instance) => {
      const real = defaultAfterStore(env, indexTurn);
      instance.testSeams.afterStore = { run: (stored) => real.run(stored).finally(afterStoreDone) };
    });
    await send(id.token, 'observations', toolEvent(sid, 'grep -r TODO src'));
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 1);
    await finished;
    const row = await env.DB.prepare(
      'SELECT o.embedded_at FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .first<{ embedded_at: number | null }>();
    expect(row?.embedded_at).toEqual(expect.any(Number));
  });

  it('keeps what it stored when the after-store steps fail', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    let ran = 0;
    await insideSession(sessionStub(teamId, sid), (instance) => {
      instance.testSeams.afterStore = {
        run: async () => {
          ran++;
          throw new Error('vector index down');
        },
      };
    });
    await send(id.token, 'observations', toolEvent(sid, 'make lint'));
    const done = await waitFor(id.token, sid, (s) => settled(s) && s.turns === 1);
    expect(done).toMatchObject({ observations_stored: 1, dead_letters: [], backoff_until: null });
    expect(ran).toBe(1);
    expect(await countRows(sid)).toEqual({ total: 1, distinct: 1 });
  });

  it('stores what the offline heuristic observer makes of an edit and a failing command', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    await insideSession(sessionStub(teamId, sid), (instance) => {
      instance.testSeams.provider = createHeuristicProvider();
    });
    await send(id.token, 'init', initEvent(sid, 'Fix the flaky test'));
    await send(id.token, 'observations', {
      ...toolEvent(sid, ''),
      tool_name: 'Edit',
      tool_input: {
        file_path: '/home/dev/widgets/src/retry.ts',
        old_string: 'attempts = 3',
        new_string: 'attempts = 5',
      },
      tool_response: { success: true },
    });
    await send(id.token, 'observations', {
      ...toolEvent(sid, 'npm test'),
      tool_response: { stdout: '', stderr: 'FAIL retry.test.ts', exit_code: 1 },
    });
    await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 1);
    const files = await env.DB.prepare(
      `SELECT f.path FROM observation_files f JOIN observations o ON o.id = f.observation_id JOIN sessions s ON s.id = o.session_id
        WHERE s.session_key = ? AND f.kind = 'modified'`,
    )
      .bind(sid)
      .all<{ path: string }>();
    expect(files.results.map((r) => r.path)).toContain('/home/dev/widgets/src/retry.ts');
    expect((await countRows(sid)).total).toBeGreaterThanOrEqual(1);
  });

  it("files a subagent's tool calls under its agent id and type, apart from the main agent's", async () => {
    const id = await newIdentity();
    const sid = fresh('s');
    await send(id.token, 'init', initEvent(sid, 'Investigate the crash'));
    await send(id.token, 'observations', toolEvent(sid, 'main agent reads logs'));
    await send(
      id.token,
      'observations',
      toolEvent(sid, 'subagent greps', { agent_id: 'agent-7', agent_type: 'Explore' }),
    );
    await waitFor(id.token, sid, (s) => settled(s) && s.observations_stored === 2);
    const rows = await env.DB.prepare(
      'SELECT o.title, o.agent_id, o.agent_type FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ? ORDER BY o.title',
    )
      .bind(sid)
      .all<{ title: string; agent_id: string | null; agent_type: string | null }>();
    expect(rows.results.map((r) => [r.title.includes('subagent'), r.agent_id, r.agent_type])).toEqual([
      [false, null, null],
      [true, 'agent-7', 'Explore'],
    ]);
  });
});
