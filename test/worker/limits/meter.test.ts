// The meter every worker test runs under (test/worker/limits.ts): it counts what one invocation sends — D1
// statements, a batch's each, and every other subrequest — in one pool, opens an invocation at every entry point
// (the Worker's handlers, every Durable Object's methods and alarm), refuses the subrequest past the plan's budget
// (Free 50, Paid 1,000) and any D1 statement binding more than 100 parameters.
import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../../src/db/client';
import { configOf } from '../../../src/config';
import {
  exemptFromFree,
  metered,
  PLAN_SUBREQUESTS,
  ParameterLimitError,
  spent,
  SubrequestLimitError,
  watchInvocations,
  type Usage,
} from '../../../src/db/meter';
import { isMeteredMethod, meteredFetch } from '../../../src/db/meter-bindings';
import { backupBucket } from '../../../src/backup/store';
import { getVectorAdapters } from '../../../src/vectors/adapters';
import { FakeVectorize, productionVectorEnv } from '../support/fake-vectorize';
import { runBatch } from '../../../src/db/batch';
import { SessionDO, sessionStub } from '../../../src/session/session-do';
import { TeamDO, teamStub } from '../../../src/slots/team-do';
import { HubDO } from '../../../src/live/hub-do';
import { LimiterDO } from '../../../src/limits/limiter-do';
import { JobDO } from '../../../src/jobs/job-do';
import { startJob } from '../../../src/jobs/start';
import { judgeHeldJob } from '../../../src/hold/backfill-job';
import { call, fresh, newIdentity } from '../support/http';
import { runJob } from '../support/jobs';
import { idsOf } from '../support/seed';
import { acknowledgeOverLimit, acknowledgeOverParameters, FREE_SUBREQUESTS, PAID_SUBREQUESTS } from '../limits';

function watch(): { all: Usage[]; stop: () => void } {
  const all: Usage[] = [];
  const stop = watchInvocations((u) => {
    all.push(u);
  });
  return { all, stop };
}

/** Sends `n` single statements in the current invocation; answers how many went through before a refusal. */
async function statements(n: number): Promise<{ sent: number; error: unknown }> {
  const d = db(env.DB);
  let sent = 0;
  try {
    for (let i = 0; i < n; i++) {
      await d.run(sql`SELECT 1`);
      sent++;
    }
  } catch (err) {
    // drizzle wraps the driver's error
    return { sent, error: (err as Error).cause ?? err };
  }
  return { sent, error: null };
}

/** The two profiles, whichever the worker project runs on (vitest.config.ts). */
const freeEnv = { ...env, CAIRN_PLAN: 'free' };
const paidEnv = { ...env, CAIRN_PLAN: 'paid' };
const plan = configOf(env).plan.name;

describe('the meter', () => {
  it('counts what a request sends to D1 under its own label', async () => {
    const id = await newIdentity();
    const w = watch();
    const res = await call('/api/admin/team', { token: id.token });
    w.stop();
    expect(res.status).toBe(200);
    const mine = w.all.find((u) => u.label === 'fetch GET /api/admin/team');
    expect(mine?.statements).toBeGreaterThan(0);
    expect(mine?.calls).toBeGreaterThan(0);
    expect(mine).toMatchObject({ plan, budget: PLAN_SUBREQUESTS[plan], refuses: true });
  });

  it('counts each statement of a batch, and notes whole-index FTS commands', async () => {
    const w = watch();
    await metered(env, 'batch', async () => {
      const d = db(env.DB);
      await runBatch(d, [d.run(sql`SELECT 1`), d.run(sql`SELECT 2`), d.run(sql`SELECT 3`)]);
      await d.run(sql`INSERT INTO prompts_fts(prompts_fts, rank) VALUES ('merge', 1)`);
      await d.run(sql`INSERT INTO prompts_fts(prompts_fts) VALUES ('optimize')`);
    });
    w.stop();
    // An incremental merge is not a whole-index command; optimize is.
    expect(w.all[0]).toMatchObject({ label: 'batch', statements: 5, calls: 3, wholeIndex: ['optimize'] });
  });

  it(`refuses subrequest ${FREE_SUBREQUESTS + 1} of one invocation on Free, as production does`, async () => {
    const w = watch();
    const out = await metered(freeEnv, 'overrun', () => statements(FREE_SUBREQUESTS + 5));
    w.stop();
    expect(out.sent).toBe(FREE_SUBREQUESTS);
    expect(out.error).toBeInstanceOf(SubrequestLimitError);
    expect((out.error as Error).message).toMatch(
      /overrun: a D1 statement would be subrequest 51 .* free plan allows 50/,
    );
    expect(w.all[0]!.refused).toBe(1);
    acknowledgeOverLimit(w.all[0]!);
  });

  it(`refuses subrequest ${PAID_SUBREQUESTS + 1} on Paid (the lower of the documented figures)`, async () => {
    const w = watch();
    const out = await metered(paidEnv, 'overrun', () => statements(PAID_SUBREQUESTS + 5));
    w.stop();
    expect(out.sent).toBe(PAID_SUBREQUESTS);
    expect(out.error).toBeInstanceOf(SubrequestLimitError);
    expect(w.all[0]).toMatchObject({ plan: 'paid', budget: PAID_SUBREQUESTS, refused: 1 });
    acknowledgeOverLimit(w.all[0]!);
  });

  it('counts D1 statements and Durable Object calls in one pool', async () => {
    const teamId = 900_000 + Math.floor(Math.random() * 99_999);
    const w = watch();
    const out = await metered(freeEnv, 'pool', async () => {
      const before = await statements(30);
      const team = teamStub(env, teamId);
      let calls = 0;
      try {
        for (let i = 0; i < 30; i++) {
          await team.ping();
          calls++;
        }
      } catch (err) {
        return { before, calls, error: err };
      }
      return { before, calls, error: null };
    });
    w.stop();
    expect(out.before.sent).toBe(30);
    expect(out.calls).toBe(20);
    expect(out.error).toBeInstanceOf(SubrequestLimitError);
    const mine = w.all.find((u) => u.label === 'pool')!;
    expect(mine).toMatchObject({ statements: 30, subrequests: 20, refused: 1 });
    acknowledgeOverLimit(mine);
  });

  it('gives an exempted whole-team operation Paid’s budget on Free, and names why', async () => {
    const w = watch();
    const out = await metered(freeEnv, 'exempt', async () => {
      exemptFromFree('issue 35: a test of the exemption');
      return statements(FREE_SUBREQUESTS + 10);
    });
    w.stop();
    expect(out).toEqual({ sent: FREE_SUBREQUESTS + 10, error: null });
    expect(w.all[0]).toMatchObject({ budget: PAID_SUBREQUESTS, exemption: 'issue 35: a test of the exemption' });
  });

  it('only counts past the budget when not refusing (production), and the invocation goes on', async () => {
    const w = watch();
    const out = await metered({ ...freeEnv, CAIRN_METER: 'count' }, 'production', () =>
      statements(FREE_SUBREQUESTS + 5),
    );
    w.stop();
    expect(out).toEqual({ sent: FREE_SUBREQUESTS + 5, error: null });
    expect(w.all[0]).toMatchObject({ refuses: false, refused: 0, statements: FREE_SUBREQUESTS + 5 });
    acknowledgeOverLimit(w.all[0]!);
  });
});

describe('every invocation kind is metered', () => {
  it('makes every RPC method and the alarm of every Durable Object class an entry point', () => {
    for (const cls of [SessionDO, TeamDO, HubDO, LimiterDO, JobDO]) {
      const proto = cls.prototype as unknown as Record<string, unknown>;
      const methods = Object.getOwnPropertyNames(proto).filter(
        (n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, n)?.value === 'function',
      );
      expect(methods.length, cls.name).toBeGreaterThan(0);
      expect(
        methods.filter((n) => !isMeteredMethod(proto[n])),
        `${cls.name}: methods outside the meter`,
      ).toEqual([]);
    }
    expect(Object.getOwnPropertyNames(SessionDO.prototype)).toContain('alarm');
  });

  it('counts a Durable Object call as a subrequest of its caller and runs it as an invocation of its own', async () => {
    const teamId = 900_000 + Math.floor(Math.random() * 99_999);
    const w = watch();
    await metered(env, 'caller', () => teamStub(env, teamId).enterWrite([], Date.now()));
    w.stop();
    expect(w.all.find((u) => u.label === 'caller')).toMatchObject({ subrequests: 1, statements: 0 });
    expect(w.all.find((u) => u.label === 'team enterWrite')).toMatchObject({ plan, subrequests: 0 });
  });

  it('runs a session object’s alarm and RPC as invocations (a method it calls on itself stays in the same one)', async () => {
    const stub = sessionStub(env, 900_001, fresh('s'));
    const w = watch();
    await stub.status();
    await runInDurableObject(stub, (o) => (o as unknown as SessionDO).admit([], 10));
    await runDurableObjectAlarm(stub);
    w.stop();
    const labels = w.all.map((u) => u.label);
    expect(labels).toContain('session status');
    expect(labels.filter((l) => l === 'session admit')).toHaveLength(1);
    expect(labels).not.toContain('session enqueue');
  });

  it('counts Vectorize, Workers AI, R2 and outside fetches in the same pool as D1 statements', async () => {
    const adapters = getVectorAdapters(productionVectorEnv(new FakeVectorize()))!;
    const bucket = backupBucket(env)!;
    const w = watch();
    await metered(freeEnv, 'bindings', async () => {
      const [v] = await adapters.embedder.embed(['one text']);
      await adapters.index.upsert([{ teamId: 900_003, id: 1, projectId: 1, type: 'discovery', values: v! }]);
      await adapters.index.query(v!, { teamId: 900_003, topK: 3 });
      await bucket.put(`meter-test/${fresh('o')}`, 'x');
      await bucket.list({ prefix: 'meter-test/' });
      await meteredFetch(`${env.FAKE_LLM_URL}/__scenario/${fresh('none')}?arrived=0`);
      await statements(2);
    });
    w.stop();
    // One embedding call, an upsert and a query, two R2 calls, one fetch; two statements and the shard map's read.
    expect(w.all[0]).toMatchObject({ label: 'bindings', subrequests: 6 });
    expect(w.all[0]!.statements).toBeGreaterThanOrEqual(2);
  });

  it('runs a job step as one invocation labelled by its kind', async () => {
    const { teamId } = await idsOf(await newIdentity());
    const w = watch();
    const job = await startJob(env, judgeHeldJob, teamId, {});
    await runJob(teamId, job.id);
    w.stop();
    expect(job.id).toMatch(/^job_/);
    expect(w.all.map((u) => u.label)).toContain('job start');
    const step = w.all.find((u) => u.label === 'job judge-held');
    expect(step?.statements).toBeGreaterThan(0);
    expect(spent(step!)).toBeLessThanOrEqual(FREE_SUBREQUESTS);
  });
});

describe('the parameter guard', () => {
  /** One statement selecting `n` bound values, through the data layer's binding. */
  const wide = (n: number) =>
    db(env.DB)
      .$client.prepare(`SELECT ${Array.from({ length: n }, () => '?').join(', ')}`)
      .bind(...Array.from({ length: n }, (_, i) => i))
      .raw();

  it('lets a statement of 100 bound parameters through', async () => {
    expect((await wide(100))[0]).toHaveLength(100);
  });

  it('refuses a statement of 101 bound parameters before D1 sees it, and fails the test even when caught', async () => {
    const w = watch();
    const err = await metered(env, 'wide', async () => {
      try {
        await wide(101);
      } catch (e) {
        return e;
      }
      return null;
    });
    w.stop();
    expect(err).toBeInstanceOf(ParameterLimitError);
    expect((err as Error).message).toMatch(/binds 101 parameters; D1 allows 100/);
    expect(w.all[0]!.overParameters).toBe(1);
    acknowledgeOverParameters();
  });
});
