// After a turn is stored, everything it can be asked about is embedded: its observations (main text and facts),
// its summary and the prompt it was filed under — never a private prompt, which is not stored at all.
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { defaultAfterStore } from '../../../src/store/after-store';
import { backfillVectors } from '../../../src/vectors/embed-job';
import { indexTurn } from '../../../src/vectors/index-records';
import { LocalEmbedder } from '../../../src/vectors/local-embedder';
import { fresh, newIdentity } from '../support/http';
import { idsOf } from '../support/seed';
import { base, initEvent, insideSession, script, send, sessionStub, settled, toolEvent, waitFor } from './support';

/** The team's local vector rows as `kind.part`, sorted. */
async function vectorsOf(teamId: number): Promise<string[]> {
  const rows = await env.DB.prepare('SELECT kind, part FROM local_vectors WHERE team_id = ? ORDER BY kind, part')
    .bind(teamId)
    .all<{ kind: string; part: number }>();
  return rows.results.map((r) => `${r.kind}.${r.part}`);
}

async function turnWithSummary(prompt: string, extra: Record<string, unknown> = {}) {
  const id = await newIdentity();
  const { teamId } = await idsOf(id);
  const sid = fresh('s');
  const scenario = fresh('tv');
  await script(scenario, [
    {
      text:
        '<observation><type>discovery</type><title>Pool size is fixed</title><narrative>The pool never grows.</narrative>' +
        '<facts><fact>The pool holds ten connections</fact><fact>Growth is disabled in config</fact></facts></observation>',
    },
    {
      text: '<summary><request>Find the pool size</request><investigated>config</investigated><learned>Ten</learned><completed>done</completed><next_steps>none</next_steps></summary>',
    },
  ]);
  // The production after-store steps, counted: each turn that stored something runs them once.
  let runs = 0;
  let bothDone!: () => void;
  const done = new Promise<void>((resolve) => (bothDone = resolve));
  await insideSession(sessionStub(teamId, sid), (instance) => {
    const real = defaultAfterStore(env, indexTurn);
    instance.testSeams.afterStore = { run: (stored) => real.run(stored).finally(() => ++runs === 2 && bothDone()) };
  });
  const at = Date.now() - 10_000;
  await send(id.token, 'init', { ...initEvent(sid, prompt), occurred_at: at, ...extra });
  await send(id.token, 'observations', {
    ...toolEvent(sid, `SCENARIO:${scenario} cat pool.ts`),
    occurred_at: at + 1_000,
  });
  await send(id.token, 'summarize', {
    ...base(sid),
    event_id: fresh('ev'),
    last_assistant_message: `SCENARIO:${scenario} ten`,
    occurred_at: at + 2_000,
  });
  await waitFor(id.token, sid, (s) => settled(s) && s.turns >= 2);
  await done;
  return teamId;
}

describe('embedding after a turn is stored', { timeout: 60_000 }, () => {
  it("embeds the turn's observation with each fact, its summary and its prompt", async () => {
    const teamId = await turnWithSummary('how big is the pool?');
    expect(await vectorsOf(teamId)).toEqual([
      'observation.0',
      'observation.1',
      'observation.2',
      'prompt.0',
      'summary.0',
    ]);
    const unembedded = await env.DB.prepare(
      'SELECT (SELECT COUNT(*) FROM summaries WHERE team_id = ?1 AND embedded_at IS NULL) + (SELECT COUNT(*) FROM prompts WHERE team_id = ?1 AND embedded_at IS NULL) AS n',
    )
      .bind(teamId)
      .first<{ n: number }>();
    expect(unembedded?.n).toBe(0);
  });

  it('embeds only what was stored of a partly private prompt', async () => {
    const embed = vi.spyOn(LocalEmbedder.prototype, 'embed');
    const teamId = await turnWithSummary('how big is the pool? <private>the staging password is hunter2</private>');
    expect(await vectorsOf(teamId)).toContain('prompt.0');
    const sent = embed.mock.calls.flatMap((c) => c[0]);
    expect(sent).toContain('how big is the pool?');
    expect(sent.some((t) => t.includes('hunter2'))).toBe(false);
    embed.mockRestore();
  });

  it('never embeds a fully private prompt, after its turn or by the backfill: it is never stored', async () => {
    const id = await newIdentity();
    const { teamId } = await idsOf(id);
    const sid = fresh('s');
    await send(id.token, 'init', { ...initEvent(sid, 'the staging password is hunter2'), private: true });
    await send(id.token, 'observations', toolEvent(sid, 'cat .env'));
    await waitFor(id.token, sid, settled);
    await backfillVectors(env, teamId, 100);
    expect(
      await env.DB.prepare('SELECT COUNT(*) AS n FROM prompts WHERE team_id = ?').bind(teamId).first<{ n: number }>(),
    ).toEqual({ n: 0 });
    expect((await vectorsOf(teamId)).filter((v) => v.startsWith('prompt'))).toEqual([]);
  });
});
