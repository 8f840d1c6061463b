// Import at speed (issue 35): POST /api/admin/import stores a part in the request that brings it while the
// invocation's budget lasts (on Workers Paid the whole part: its rows are keyword-searchable when it answers), and
// an `import` job writes what is left (Workers Free); neither embeds: the team's `embed` job gives the rows their
// vectors once the parts stop coming (each part moves it later). A job step run again after a restart stores nothing
// twice and counts what its first run added.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { metered, watchInvocations, type Usage } from '../../../src/db/meter';
import type { CairnEnv } from '../../../src/env';
import worker from '../../../src/index';
import { stepContext } from '../../../src/jobs/step';
import type { WireJob } from '../../../src/shared/jobs';
import { parseNdjson } from '../../../src/transfer/import';
import { importJob } from '../../../src/transfer/import-job';
import { EMBED_AFTER_MS, pieceCost, pieceSize } from '../../../src/transfer/import-write';
import { getVectorAdapters } from '../../../src/vectors/adapters';
import { EMBED_CHUNK_TEXTS } from '../../../src/vectors/index-records';
import { BASE, call, fresh, newIdentity } from '../support/http';
import { teamOfToken } from '../support/import';
import { idsOf } from '../support/seed';
import { lane, runJob } from '../support/jobs';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const FACTS = 5;

/** A full part: a project, a session and 248 observations of six texts each (their main text and five facts). */
function part(user: string, word: string, sk = fresh('s'), withHead = true, first = 0) {
  const key = `github.com/acme/${word}`;
  const lines: Record<string, unknown>[] = withHead
    ? [
        { kind: 'project', key, visibility: 'team', owner: user, created_at: T0 },
        {
          kind: 'session',
          session_key: sk,
          project: key,
          user,
          platform: 'claude-code',
          prompt_count: 1,
          started_at: T0,
          ended_at: null,
        },
      ]
    : [];
  for (let i = first; lines.length < 250; i++) {
    lines.push({
      kind: 'observation',
      session_key: sk,
      prompt_number: 1,
      prompt_id: null,
      author: user,
      created_at: T0 + i,
      type: 'discovery',
      title: `${word} finding ${i}`,
      subtitle: null,
      facts: Array.from({ length: FACTS }, (_, f) => `${word} fact ${f} of finding ${i}`),
      narrative: `The ${word} module does thing ${i}.`,
      concepts: [],
      files_read: [`src/${word}/${i % 7}.ts`],
      files_modified: [],
      discovery_tokens: 0,
      content_hash: `${word}-${i}`,
      agent_id: null,
      agent_type: null,
      source: 'observer',
    });
  }
  return lines.map((l) => JSON.stringify(l)).join('\n');
}

const count = async (sql: string, ...args: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...args)
    .first<{ n: number }>())!.n;
const observationsOf = (teamId: number) => count('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?', teamId);
const unembeddedOf = (teamId: number) =>
  count('SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND embedded_at IS NULL', teamId);
const vectorsOf = (teamId: number) =>
  count("SELECT COUNT(*) AS n FROM local_vectors WHERE team_id = ? AND kind = 'observation'", teamId);

/** When the lane will run the job's next step (null: never again). */
const nextAt = (teamId: number, id: string) =>
  runInDurableObject(
    lane(teamId),
    async (_o, state) =>
      state.storage.sql.exec<{ next_at: number | null }>('SELECT next_at FROM jobs WHERE id = ?', id).one().next_at,
  );

/** The import requests (and nothing else) this runs, as the meter counted them. */
async function watched<T>(fn: () => Promise<T>): Promise<{ out: T; requests: Usage[] }> {
  const requests: Usage[] = [];
  const stop = watchInvocations((u) => {
    if (u.label === 'fetch POST /api/admin/import') requests.push(u);
  });
  try {
    return { out: await fn(), requests };
  } finally {
    stop();
  }
}

/**
 * POST /api/admin/import through the Worker's entry with `plan`'s budget (the worker tests run under Free; a Paid
 * deployment writes the whole part in the request).
 */
async function postOn(plan: 'free' | 'paid', token: string, body: string): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${BASE}/api/admin/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body,
    }),
    { ...env, CAIRN_PLAN: plan } as CairnEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

const keywordHits = async (token: string, word: string) => {
  const res = await call(`/api/search?q=${encodeURIComponent(`${word} finding`)}&mode=fts&limit=5`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: unknown[] }).results.length;
};

describe('import at speed', { timeout: 120_000 }, () => {
  it('on Workers Paid stores a full part in the request that brings it, keyword-searchable when it answers, and leaves its vectors to the embed job', async () => {
    const a = await newIdentity();
    const teamId = await teamOfToken(a.token);
    const word = fresh('imp').replaceAll('-', '');
    const { out: res, requests } = await watched(() => postOn('paid', a.token, part(a.user, word)));
    const answered = Date.now();
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { records: number; imported: Record<string, number>; embed_job: string };
    expect(body).toMatchObject({ records: 250, imported: { projects: 1, sessions: 1, observations: 248 } });
    // One invocation: the part's check, three pieces of ≤ 90 records (each planned and written in one batch), the
    // embed job queued. Within Workers Paid's 1,000, and bounded by the part, never by the team.
    expect(requests).toHaveLength(1);
    const used = requests[0]!.statements + requests[0]!.subrequests;
    expect(used).toBeLessThanOrEqual(3 * pieceCost(90) + 30);
    expect(await observationsOf(teamId)).toBe(248);
    expect(await keywordHits(a.token, word)).toBeGreaterThan(0);
    // No vectors yet, and none made in the request: the embed job waits for the import's parts to stop coming.
    expect(await unembeddedOf(teamId)).toBe(248);
    expect(await vectorsOf(teamId)).toBe(0);
    const embed = (await lane(teamId).get(body.embed_job))!;
    expect(embed).toMatchObject({ kind: 'embed', status: 'queued' });
    expect(await nextAt(teamId, body.embed_job)).toBeGreaterThanOrEqual(answered + EMBED_AFTER_MS - 1_000);

    const job = await runJob(teamId, body.embed_job);
    expect(job.status, JSON.stringify(job.error)).toBe('done');
    expect(await unembeddedOf(teamId)).toBe(0);
    expect(await vectorsOf(teamId)).toBe(248 * (1 + FACTS));
    // Never more than one chunk of vectors held: 1,488 texts, ≤ 100 a call.
    const dims = getVectorAdapters(env)!.embedder.dimensions;
    expect(job.stats.held.max).toBeLessThanOrEqual(EMBED_CHUNK_TEXTS * dims * 8);
    expect(job.stats.statements.max).toBeLessThanOrEqual(configOf(env).jobStep.statements);
  });

  it("makes one embed job for a whole import: each part moves it after that part's answer", async () => {
    const a = await newIdentity();
    const teamId = await teamOfToken(a.token);
    const word = fresh('two').replaceAll('-', '');
    const sk = fresh('s');
    const first = await postOn('paid', a.token, part(a.user, word, sk));
    expect(first.status, await first.clone().text()).toBe(200);
    const one = (await first.json()) as { embed_job: string };
    const firstAt = await nextAt(teamId, one.embed_job);
    await new Promise((r) => setTimeout(r, 50));
    // The next part names the session the first one made.
    const second = await postOn('paid', a.token, part(a.user, word, sk, false, 1_000));
    const answered = Date.now();
    expect(second.status, await second.clone().text()).toBe(200);
    const two = (await second.json()) as { imported: Record<string, number>; embed_job: string };
    expect(two.imported).toMatchObject({ sessions: 0, observations: 250 });
    expect(two.embed_job).toBe(one.embed_job);
    const later = await nextAt(teamId, two.embed_job);
    expect(later).toBeGreaterThan(firstAt!);
    expect(later).toBeGreaterThanOrEqual(answered + EMBED_AFTER_MS - 1_000);
    expect((await lane(teamId).list(10, 'embed')).filter((j) => j.status === 'queued')).toHaveLength(1);
    // A part that adds nothing (sent again) leaves the job where it is.
    const again = await postOn('paid', a.token, part(a.user, word, sk, false, 1_000));
    expect(((await again.json()) as { embed_job?: string }).embed_job).toBeUndefined();
    expect(await nextAt(teamId, two.embed_job)).toBe(later);
  });

  it("on Workers Free writes what a request's 50 statements allow and leaves the rest to the job, which embeds nothing", async () => {
    const a = await newIdentity();
    const teamId = await teamOfToken(a.token);
    const word = fresh('free').replaceAll('-', '');
    const { out: res, requests } = await watched(() => postOn('free', a.token, part(a.user, word)));
    expect(res.status, await res.clone().text()).toBe(202);
    const body = (await res.json()) as { imported: Record<string, number>; job: WireJob };
    expect(requests).toHaveLength(1);
    expect(requests[0]!.statements + requests[0]!.subrequests).toBeLessThanOrEqual(50);
    const inRequest = await observationsOf(teamId);
    expect(inRequest).toBe(body.imported.observations);
    expect(inRequest).toBeGreaterThan(0);
    expect(inRequest).toBeLessThan(248);

    const job = await runJob(teamId, body.job.id);
    expect(job.status, JSON.stringify(job.error)).toBe('done');
    // The job's result counts the whole part, the request's pieces too.
    expect(job.result).toMatchObject({ records: 250, imported: { projects: 1, sessions: 1, observations: 248 } });
    expect(await observationsOf(teamId)).toBe(248);
    expect(await vectorsOf(teamId)).toBe(0);
    expect((await lane(teamId).list(10, 'embed')).filter((j) => j.status === 'queued')).toHaveLength(1);
  });

  it('writes a part in Free steps of at most 40 statements, and stores nothing twice when every step runs again from the same cursor', async () => {
    const a = await newIdentity();
    const { teamId, userId } = await idsOf(a);
    const free = { ...env, CAIRN_PLAN: 'free' } as CairnEnv;
    // The kind's steps run here (not through POST, whose own job would run beside them): each step twice from
    // the cursor it started from (the first run's writes landed, its cursor was lost), the rerun's cursor kept.
    const p = importJob.params.parse({
      caller: { teamId, userId, handle: a.user },
      lines: parseNdjson(part(a.user, fresh('again'))),
    });
    let cursor = importJob.init(p, { teamId, now: Date.now() }).cursor;
    const step = () => {
      const ctx = stepContext({
        env: free,
        jobId: 'inline',
        teamId,
        actorUserId: userId,
        budget: configOf(free).jobStep,
      });
      return metered(free, 'job import', async () => ({ out: await importJob.step(ctx, p, cursor), cost: ctx.cost() }));
    };
    let steps = 0;
    let result: unknown = null;
    for (;;) {
      const first = await step();
      const again = await step();
      expect(first.cost.statements).toBeLessThanOrEqual(40);
      expect(again.cost.statements).toBeLessThanOrEqual(40);
      steps++;
      cursor = again.out.cursor;
      result = again.out.result;
      if (again.out.done) break;
      expect(steps).toBeLessThan(100);
    }
    // Pieces of pieceSize(40) = 14 records: more than one step, however the reruns fall.
    expect(steps).toBeGreaterThan(250 / (2 * pieceSize(40)));
    // What the job reports counts the rows the first run of each step added, not the rerun's nothing-new.
    expect(result).toMatchObject({ records: 250, imported: { projects: 1, sessions: 1, observations: 248 } });
    expect(await observationsOf(teamId)).toBe(248);
    expect(await count('SELECT COUNT(*) AS n FROM sessions WHERE team_id = ?', teamId)).toBe(1);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE team_id = ?', teamId)).toBe(1);
    expect(await vectorsOf(teamId)).toBe(0);
  });
});
