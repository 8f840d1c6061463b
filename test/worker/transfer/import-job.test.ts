// Import as a job (issue 22): POST /api/admin/import checks the part and answers at once with an `import` job;
// the job writes the part in pieces and embeds the new rows in chunks (≤ 100 texts a call, one chunk of vectors
// held), each step within the step budget, and a step run again after a restart stores and embeds nothing twice.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { metered, watchInvocations, type Usage } from '../../../src/db/meter';
import { stepContext } from '../../../src/jobs/step';
import type { WireJob } from '../../../src/shared/jobs';
import { parseNdjson } from '../../../src/transfer/import';
import { importJob } from '../../../src/transfer/import-job';
import { getVectorAdapters } from '../../../src/vectors/adapters';
import { EMBED_CHUNK_TEXTS } from '../../../src/vectors/index-records';
import { fresh, newIdentity } from '../support/http';
import { postImport, teamOfToken } from '../support/import';
import { idsOf } from '../support/seed';
import { runJob } from '../support/jobs';

const T0 = Date.parse('2026-05-04T09:00:00Z');
const FACTS = 5;

/** A full part: a project, a session and 248 observations of six texts each (their main text and five facts). */
function part(user: string, word: string) {
  const key = `github.com/acme/${word}`;
  const sk = fresh('s');
  const lines: Record<string, unknown>[] = [
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
  ];
  for (let i = 0; lines.length < 250; i++) {
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
      files_read: [],
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

describe('import as a job', { timeout: 120_000 }, () => {
  it('answers a full part at once with a job that stores and embeds it in steps, each within the step budget', async () => {
    const a = await newIdentity();
    const teamId = await teamOfToken(a.token);
    const requests: Usage[] = [];
    const stop = watchInvocations((u) => {
      if (u.label === 'fetch POST /api/admin/import') requests.push(u);
    });
    const res = await postImport(a.token, part(a.user, fresh('imp')));
    stop();
    expect(res.status, await res.clone().text()).toBe(202);
    const body = (await res.json()) as { records: number; planned: Record<string, number>; job: WireJob };
    expect(body).toMatchObject({
      records: 250,
      planned: { projects: 1, sessions: 1, observations: 248 },
      job: { kind: 'import' },
    });
    // The request read and planned; it wrote nothing of the part (the job does).
    expect(requests).toHaveLength(1);
    expect(requests[0]!.statements).toBeLessThan(30);

    const job = await runJob(teamId, body.job.id);
    expect(job.status, JSON.stringify(job.error)).toBe('done');
    expect(job.result).toMatchObject({ records: 250, imported: { projects: 1, sessions: 1, observations: 248 } });
    const budget = configOf(env).jobStep;
    expect(job.stats.steps).toBeGreaterThan(2);
    expect(job.stats.statements.max).toBeLessThanOrEqual(budget.statements);
    // Never more than one chunk of vectors held: 1,488 texts, ≤ 100 a call.
    const dims = getVectorAdapters(env)!.embedder.dimensions;
    expect(job.stats.held.max).toBeGreaterThan(0);
    expect(job.stats.held.max).toBeLessThanOrEqual(EMBED_CHUNK_TEXTS * dims * 8);
    expect(await observationsOf(teamId)).toBe(248);
    expect(await unembeddedOf(teamId)).toBe(0);
    expect(await vectorsOf(teamId)).toBe(248 * (1 + FACTS));
  });

  it('stores and embeds nothing twice when every step runs again from the same cursor, as after a restart', async () => {
    const a = await newIdentity();
    const { teamId, userId } = await idsOf(a);
    // The kind's steps run here (not through POST, whose own job would run beside them): each step twice from
    // the cursor it started from (the first run's writes landed, its cursor was lost), the rerun's cursor kept.
    const p = importJob.params.parse({
      caller: { teamId, userId, handle: a.user },
      lines: parseNdjson(part(a.user, fresh('again'))),
    });
    let cursor = importJob.init(p, { teamId, now: Date.now() }).cursor;
    const step = () => {
      const ctx = stepContext({ env, jobId: 'inline', teamId, actorUserId: userId, budget: configOf(env).jobStep });
      return metered(env, 'job import', () => importJob.step(ctx, p, cursor));
    };
    let steps = 0;
    let result: unknown = null;
    for (;;) {
      await step();
      const again = await step();
      steps++;
      cursor = again.cursor;
      result = again.result;
      if (again.done) break;
      expect(steps).toBeLessThan(100);
    }
    expect(steps).toBeGreaterThanOrEqual(2);
    // What the job reports counts the rows the first run of each step added, not the rerun's nothing-new.
    expect(result).toMatchObject({ records: 250, imported: { projects: 1, sessions: 1, observations: 248 } });
    expect(await observationsOf(teamId)).toBe(248);
    expect(await count('SELECT COUNT(*) AS n FROM sessions WHERE team_id = ?', teamId)).toBe(1);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE team_id = ?', teamId)).toBe(1);
    expect(await unembeddedOf(teamId)).toBe(0);
    expect(await vectorsOf(teamId)).toBe(248 * (1 + FACTS));
  });
});
