// Production's per-invocation budget in every worker test. Cloudflare cuts an invocation off at 50 subrequests on
// Workers Free and 1,000 on Paid, D1 statements included, and refuses a statement binding more than 100 parameters;
// local workerd enforces the parameters only. Every entry point is a metered invocation (src/db/meter.ts), and the
// worker projects run with CAIRN_PLAN=free and CAIRN_METER=refuse (vitest.config.ts): past its budget an
// invocation's next subrequest throws as production would, and a test in which any invocation was refused, or
// any statement bound more than 100 parameters (even where the code caught the error), fails here, naming it.
import { afterAll, afterEach, beforeEach, expect } from 'vitest';
import { spent, watchInvocations, watchParameters, type Usage } from '../../src/db/meter';
// The entry registers the job kinds (src/index.ts). Each test file gets its own module graph, which the job
// lanes' objects share, while the entry a request runs may still be an earlier file's: importing it here puts
// the kinds in every file's registry, so a job started by a test (not only by a request) finds its kind.
import '../../src/index';

/** Workers Paid: subrequests per invocation, D1 statements included. */
export const PAID_SUBREQUESTS = 1000;
/** Workers Free: subrequests per invocation, D1 statements included. */
export const FREE_SUBREQUESTS = 50;

const seen: Usage[] = [];
const overParameters: string[] = [];
/** Label prefixes of invocations a test runs under Paid's budget (`underPaid`), with why. */
const paidOnly = new Map<string, string>();
const unwatch = watchInvocations((u) => {
  seen.push(u);
  for (const [prefix, why] of paidOnly)
    if (u.label.startsWith(prefix)) {
      u.budget = PAID_SUBREQUESTS;
      u.exemption = `test: ${why}`;
    }
});
const unwatchParameters = watchParameters((n, sql) => {
  overParameters.push(`${n} parameters: ${sql.slice(0, 80)}`);
});
// Files share one isolate (isolate: false): this file's watchers leave with it, not piling up under the next ones.
afterAll(() => {
  unwatch();
  unwatchParameters();
});

beforeEach(() => {
  seen.length = 0;
  overParameters.length = 0;
});

afterEach(() => {
  const over = seen
    .filter((u) => u.refused > 0 || spent(u) > u.budget)
    .map(
      (u) =>
        `${u.label}: ${spent(u) + u.refused} subrequests (${u.statements} D1 statements), ${u.plan} allows ${u.budget}`,
    );
  expect(over, 'invocations past their plan subrequest budget').toEqual([]);
  expect(overParameters, 'D1 statements binding more than 100 parameters').toEqual([]);
});

/**
 * Runs `fn` with the invocations labelled `prefix…` under Paid's budget: a path a Free deployment cannot take at
 * this size (documented as such), which the test still checks against Paid's 1,000.
 */
export async function underPaid<T>(prefix: string, why: string, fn: () => Promise<T>): Promise<T> {
  paidOnly.set(prefix, why);
  try {
    return await fn();
  } finally {
    paidOnly.delete(prefix);
  }
}

/** For a test that shows the budget works: its deliberate overrun is not a failure. */
export function acknowledgeOverLimit(u: Usage): void {
  const i = seen.indexOf(u);
  if (i >= 0) seen.splice(i, 1);
}

/** For the test that shows the parameter guard works: its deliberate statement is not a failure. */
export function acknowledgeOverParameters(): void {
  overParameters.length = 0;
}
