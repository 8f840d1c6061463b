// The statement meter every worker test runs under (test/worker/limits.ts): it counts what one invocation sends
// to D1, a batch's statements each, and refuses the statement past production's limit.
import { env } from 'cloudflare:workers';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../../src/db/client';
import { metered, StatementLimitError, watchInvocations, type Usage } from '../../../src/db/meter';
import { runBatch } from '../../../src/db/batch';
import { call, newIdentity } from '../support/http';
import { acknowledgeOverLimit, PAID_STATEMENTS } from '../limits';

function watch(): { all: Usage[]; stop: () => void } {
  const all: Usage[] = [];
  const stop = watchInvocations((u) => {
    all.push(u);
  });
  return { all, stop };
}

describe('the statement meter', () => {
  it('counts what a request sends to D1 under its own label', async () => {
    const id = await newIdentity();
    const w = watch();
    const res = await call('/api/admin/team', { token: id.token });
    w.stop();
    expect(res.status).toBe(200);
    const mine = w.all.find((u) => u.label === 'fetch GET /api/admin/team');
    expect(mine?.statements).toBeGreaterThan(0);
    expect(mine?.calls).toBeGreaterThan(0);
  });

  it('counts each statement of a batch, and notes whole-index FTS commands', async () => {
    const w = watch();
    await metered('batch', async () => {
      const d = db(env.DB);
      await runBatch(d, [d.run(sql`SELECT 1`), d.run(sql`SELECT 2`), d.run(sql`SELECT 3`)]);
      await d.run(sql`INSERT INTO prompts_fts(prompts_fts, rank) VALUES ('merge', 1)`);
      await d.run(sql`INSERT INTO prompts_fts(prompts_fts) VALUES ('optimize')`);
    });
    w.stop();
    // An incremental merge is not a whole-index command; optimize is.
    expect(w.all[0]).toMatchObject({ label: 'batch', statements: 5, calls: 3, wholeIndex: ['optimize'] });
  });

  it(`refuses statement ${PAID_STATEMENTS + 1} of one invocation, as production does`, async () => {
    const w = watch();
    const sent = await metered('overrun', async () => {
      const d = db(env.DB);
      let n = 0;
      try {
        for (let i = 0; i < PAID_STATEMENTS + 5; i++) {
          await d.run(sql`SELECT 1`);
          n++;
        }
      } catch (err) {
        // drizzle wraps the driver's error
        expect((err as Error).cause).toBeInstanceOf(StatementLimitError);
      }
      return n;
    });
    w.stop();
    expect(sent).toBe(PAID_STATEMENTS);
    expect(w.all[0]!.refused).toBe(1);
    acknowledgeOverLimit(w.all[0]!);
  });
});
