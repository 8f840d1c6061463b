// Observer spend: each call's tokens as the provider reported them, per team, day, session and model; the
// usage report with estimated cost; daily budgets that switch a team to the heuristic observer until the day
// turns (the session's clock is injected), and say so in the context index and to `cairn status`.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { budgetNotice, budgetState, periodOf } from '../../../src/observer/budget';
import { estimateCost, priceTable } from '../../../src/observer/prices';
import type { CairnEnv } from '../../../src/env';
import { readOnlyTurn } from '../../../src/observer/model-choice';
import { DEFAULT_ANTHROPIC_MODEL } from '../../../src/observer/providers/anthropic';
import { createProvider } from '../../../src/observer/providers/index';
import { usageOf } from '../../../src/observer/providers/openai';
import { modelTotals, totalCost } from '../../../src/usage/report';
import { call, fresh } from '../support/http';
import { idsOf } from '../support/seed';
import { addTeammate, json, newOwner } from '../teams/support';
import {
  base,
  initEvent,
  insideSession,
  recorded,
  script,
  send,
  sessionStub,
  settled,
  toolEvent,
  waitFor,
} from './support';

interface UsageRow {
  day: string;
  session_id: number;
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

const usageRows = async (teamId: number) =>
  (
    await env.DB.prepare(
      'SELECT day, session_id, model, calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens FROM observer_usage WHERE team_id = ? ORDER BY day',
    )
      .bind(teamId)
      .all<UsageRow>()
  ).results;

describe('observer usage', { timeout: 30_000 }, () => {
  it('records the tokens each call reported under the team, day, session and model, and reports their estimated cost', async () => {
    const owner = await newOwner();
    const ids = await idsOf(owner);
    const sid = fresh('s');
    const scenario = fresh('usage');
    const usage = { input: 1_200, output: 300, cacheRead: 800, cacheWrite: 100 };
    await script(scenario, [{ usage }, { usage }, { usage }]);
    await send(owner.token, 'init', initEvent(sid, 'Make the build green'));
    await send(owner.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} npm run build`));
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 1);

    const calls = (await recorded(scenario)).length;
    const model = String((await recorded(scenario))[0]!.body.model);
    const session = await env.DB.prepare('SELECT id FROM sessions WHERE team_id = ? AND session_key = ?')
      .bind(ids.teamId, sid)
      .first<{ id: number }>();
    expect(await usageRows(ids.teamId)).toEqual([
      {
        day: periodOf(Date.now()).day,
        session_id: session!.id,
        model,
        calls,
        input_tokens: calls * usage.input,
        output_tokens: calls * usage.output,
        cache_read_tokens: calls * usage.cacheRead,
        cache_write_tokens: calls * usage.cacheWrite,
      },
    ]);

    const report = await json<{
      total_tokens: number;
      estimated_cost_usd: number | null;
      days: { model: string; calls: number; input_tokens: number; estimated_cost_usd: number | null }[];
      sessions: { session_id: string; calls: number }[];
      models: {
        model: string;
        calls: number;
        input_tokens: number;
        output_tokens: number;
        cache_read_tokens: number;
        cache_write_tokens: number;
        total_tokens: number;
        estimated_cost_usd: number | null;
      }[];
    }>(await call('/api/admin/usage?days=7', { token: owner.token }));
    expect(report.total_tokens).toBe(calls * (usage.input + usage.output + usage.cacheRead + usage.cacheWrite));
    const expected = estimateCost(priceTable(undefined), model, {
      inputTokens: calls * 1_200,
      outputTokens: calls * 300,
      cacheReadTokens: calls * 800,
      cacheWriteTokens: calls * 100,
    });
    expect(expected).not.toBeNull();
    expect(report.days).toEqual([
      expect.objectContaining({ model, calls, input_tokens: calls * usage.input, estimated_cost_usd: expected }),
    ]);
    expect(report.estimated_cost_usd).toBe(expected);
    expect(report.sessions).toEqual([expect.objectContaining({ session_id: sid, calls })]);
    // The viewer's spend panel reads the per-model totals.
    expect(report.models).toEqual([
      {
        model,
        calls,
        input_tokens: calls * usage.input,
        output_tokens: calls * usage.output,
        cache_read_tokens: calls * usage.cacheRead,
        cache_write_tokens: calls * usage.cacheWrite,
        total_tokens: report.total_tokens,
        estimated_cost_usd: expected,
      },
    ]);
  });

  it('totals each model over its days, costliest first, and gives no estimate for a model without a price', () => {
    const prices = priceTable(undefined);
    const row = (day: string, model: string, inputTokens: number) => ({
      day,
      model,
      calls: 1,
      inputTokens,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    const rows = [
      row('2027-01-02', 'claude-haiku-4-5', 1_000),
      row('2027-01-02', 'house-model', 5_000),
      row('2027-01-01', 'claude-haiku-4-5', 3_000),
      row('2027-01-01', 'claude-sonnet-4-5', 2_000),
    ];
    const models = modelTotals(rows, (r) => estimateCost(prices, r.model, r));
    expect(models.map((m) => [m.model, m.calls, m.input_tokens, m.total_tokens])).toEqual([
      ['claude-sonnet-4-5', 1, 2_000, 2_010],
      ['claude-haiku-4-5', 2, 4_000, 4_020],
      ['house-model', 1, 5_000, 5_010],
    ]);
    // haiku: 4,000 in at $1/M + 20 out at $5/M; sonnet: 2,000 in at $3/M + 10 out at $15/M.
    expect(models.map((m) => m.estimated_cost_usd)).toEqual([0.00615, 0.0041, null]);
    expect(totalCost(models)).toBeNull();
    expect(totalCost(models.slice(0, 2))).toBe(0.01025);
  });

  it('shows the usage report to admins only', async () => {
    const owner = await newOwner();
    const member = await addTeammate(owner, fresh('m'));
    expect((await call('/api/admin/usage', { token: member.token })).status).toBe(403);
    expect((await call('/api/admin/usage?days=0', { token: owner.token })).status).toBe(400);
  });

  it('reads OpenAI usage as uncached input plus cache reads (OpenAI counts cached tokens inside prompt_tokens)', () => {
    expect(
      usageOf({ prompt_tokens: 1_000, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 600 } }),
    ).toEqual({
      inputTokens: 400,
      outputTokens: 50,
      cacheReadTokens: 600,
      cacheWriteTokens: 0,
    });
    expect(usageOf(undefined)).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });
});

describe('a cheaper model for read-only turns (OBSERVER_READONLY_MODEL)', { timeout: 40_000 }, () => {
  const CHEAP = 'claude-haiku-readonly-test';
  const fileEvent = (sid: string, tool: string, input: Record<string, unknown>, response: Record<string, unknown>) => ({
    ...base(sid),
    event_id: fresh('ev'),
    tool_name: tool,
    tool_input: input,
    tool_response: response,
    tool_use_id: fresh('tu'),
  });

  it('asks the cheaper model for a turn that only read, the main model for a turn that edited, and meters each under its own model', async () => {
    const owner = await newOwner();
    const ids = await idsOf(owner);
    const sid = fresh('s');
    const scenario = fresh('readonly');
    const usage = { input: 900, output: 60 };
    await script(scenario, [{ usage }, { usage }, { usage }, { usage }]);
    // The session observes through the provider the deployment's settings build, with the setting on.
    await insideSession(sessionStub(ids.teamId, sid), (i) => {
      i.testSeams.provider = createProvider({ ...env, OBSERVER_READONLY_MODEL: CHEAP } as CairnEnv);
    });
    await send(owner.token, 'init', initEvent(sid, 'Why does the app start twice?'));
    await send(
      owner.token,
      'observations',
      fileEvent(
        sid,
        'Read',
        { file_path: '/home/dev/widgets/src/app.ts' },
        { content: `SCENARIO:${scenario} export const start = () => boot();` },
      ),
    );
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    await send(
      owner.token,
      'observations',
      fileEvent(
        sid,
        'Edit',
        {
          file_path: '/home/dev/widgets/src/app.ts',
          old_string: 'boot()',
          new_string: `once(boot) // SCENARIO:${scenario}`,
        },
        { filePath: '/home/dev/widgets/src/app.ts' },
      ),
    );
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 2);

    expect((await recorded(scenario)).map((r) => r.body.model)).toEqual([CHEAP, DEFAULT_ANTHROPIC_MODEL]);
    const rows = (await usageRows(ids.teamId)).map((r) => [r.model, r.calls, r.input_tokens]).sort();
    expect(rows).toEqual(
      [
        [CHEAP, 1, 900],
        [DEFAULT_ANTHROPIC_MODEL, 1, 900],
      ].sort(),
    );
    const report = await json<{ observer: { read_only_model: string | null }; models: { model: string }[] }>(
      await call('/api/admin/usage', { token: owner.token }),
    );
    expect(report.models.map((m) => m.model).sort()).toEqual([CHEAP, DEFAULT_ANTHROPIC_MODEL].sort());
  });

  it('counts a turn as read-only only when every tool call only reads and no summary is asked for', () => {
    const ev = (...names: string[]) => names.map((toolName) => ({ toolName }));
    expect(readOnlyTurn(ev('Read', 'Grep', 'Glob', 'LS', 'WebFetch', 'WebSearch'), null)).toBe(true);
    expect(readOnlyTurn(ev('read_file', 'list_directory'), null)).toBe(true);
    expect(readOnlyTurn(ev('Read', 'Edit'), null)).toBe(false);
    expect(readOnlyTurn(ev('Bash'), null)).toBe(false);
    expect(readOnlyTurn(ev('mcp__github__get_issue'), null)).toBe(false);
    expect(
      readOnlyTurn(ev('Read'), { eventId: 'e', lastAssistantMessage: 'done', occurredAt: 0, promptNumber: 1 }),
    ).toBe(false);
    expect(readOnlyTurn([], null)).toBe(false);
  });

  it('is off unless set: the deployment as configured for tests asks its one model', () => {
    const provider = createProvider(env as unknown as CairnEnv);
    expect(provider.readOnlyModel).toBeUndefined();
  });
});

describe('observer budgets', { timeout: 40_000 }, () => {
  it('switches a team whose daily budget is spent to the heuristic observer, says so, and switches back the next day', async () => {
    const owner = await newOwner();
    const ids = await idsOf(owner);
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { observer_budget_tokens_per_day: 1_000 },
      }),
    );
    const today = periodOf(Date.now());
    await env.DB.prepare(
      "INSERT INTO observer_usage (team_id, day, session_id, model, calls, input_tokens) VALUES (?, ?, 0, 'earlier', 1, 1500)",
    )
      .bind(ids.teamId, today.day)
      .run();

    const sid = fresh('s');
    const scenario = fresh('budget');
    await script(scenario, []);
    let now = Date.now();
    await insideSession(sessionStub(ids.teamId, sid), (i) => {
      i.testSeams.now = () => now;
    });
    await send(owner.token, 'init', initEvent(sid, 'Fix the flaky test'));
    await send(owner.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} npm test`));
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 1);
    // The heuristic observer stored it: the model was never asked, and nothing was added to the spend.
    expect(await recorded(scenario)).toEqual([]);
    expect((await usageRows(ids.teamId)).map((r) => r.model)).toEqual(['earlier']);

    const context = await (await call('/api/context?project=github.com/acme/widgets', { token: owner.token })).text();
    expect(context).toContain('Observer budget for this day is spent (1500 of 1000 tokens)');
    const budget = await json<{ budget: { exhausted: string; until: number; notice: string } }>(
      await call('/api/observer/budget', { token: owner.token }),
    );
    expect(budget.budget).toMatchObject({ exhausted: 'day', until: today.nextDay });

    // The day turns for this session's clock: the next turn asks the model again and is metered on the new day.
    now = today.nextDay + 60_000;
    await send(owner.token, 'observations', toolEvent(sid, `SCENARIO:${scenario} npm test -- --retry`));
    await waitFor(owner.token, sid, (s) => settled(s) && s.observations_stored >= 2);
    expect((await recorded(scenario)).length).toBeGreaterThanOrEqual(1);
    expect((await usageRows(ids.teamId)).map((r) => r.day)).toEqual([today.day, periodOf(now).day]);
  });

  it('leaves the context index and status quiet while the budget holds', async () => {
    const owner = await newOwner();
    await json(
      await call('/api/admin/settings', {
        token: owner.token,
        method: 'PATCH',
        json: { observer_budget_tokens_per_month: 1_000_000 },
      }),
    );
    const budget = await json<{
      observer: { provider: string };
      budget: { exhausted: string | null; notice: string | null; per_month: number };
    }>(await call('/api/observer/budget', { token: owner.token }));
    expect(budget.observer.provider).toBe('anthropic');
    expect(budget.budget).toMatchObject({ exhausted: null, notice: null, per_month: 1_000_000 });
    const context = await (await call('/api/context?project=github.com/acme/widgets', { token: owner.token })).text();
    expect(context).not.toContain('Observer budget');
  });

  it('turns days and months at UTC midnight, and a spent month outranks a spent day', () => {
    const lastOfJan = Date.UTC(2027, 0, 31, 23, 59, 59);
    const p = periodOf(lastOfJan);
    expect(p).toEqual({
      day: '2027-01-31',
      monthStart: '2027-01-01',
      nextDay: Date.UTC(2027, 1, 1),
      nextMonth: Date.UTC(2027, 1, 1),
    });
    expect(periodOf(lastOfJan + 1_000).day).toBe('2027-02-01');
    expect(periodOf(Date.UTC(2027, 11, 31, 12)).nextMonth).toBe(Date.UTC(2028, 0, 1));

    const budgets = { observer_budget_tokens_per_day: 100, observer_budget_tokens_per_month: 1_000 };
    expect(budgetState(budgets, { day: 99, month: 500 }, p)).toMatchObject({ exhausted: null, until: null });
    expect(budgetState(budgets, { day: 100, month: 500 }, p)).toMatchObject({ exhausted: 'day', until: p.nextDay });
    const month = budgetState(budgets, { day: 100, month: 1_000 }, p);
    expect(month).toMatchObject({ exhausted: 'month', until: p.nextMonth });
    expect(budgetNotice(month)).toContain('until 2027-02-01 00:00 UTC');
    expect(budgetState({}, { day: 1e9, month: 1e9 }, p).exhausted).toBeNull();
  });
});
