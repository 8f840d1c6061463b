// Production's per-invocation limit in every worker test: D1 answers at most 1,000 statements to one invocation
// on Workers Paid (50 on Free), and local workerd enforces nothing. Every entry point is a metered invocation
// (src/db/meter.ts); past the limit the meter refuses the statement as production would, and a test in which any
// invocation was refused (or sent more) fails here, naming it.
import { afterAll, afterEach, beforeEach, expect } from 'vitest';
import { setStatementLimit, watchInvocations, type Usage } from '../../src/db/meter';
// The entry registers the job kinds (src/index.ts). Each test file gets its own module graph, which the job
// lanes' objects share, while the entry a request runs may still be an earlier file's: importing it here puts
// the kinds in every file's registry, so a job started by a test (not only by a request) finds its kind.
import '../../src/index';

/** Workers Paid: D1 statements per invocation. */
export const PAID_STATEMENTS = 1000;

setStatementLimit(PAID_STATEMENTS);
const seen: Usage[] = [];
const unwatch = watchInvocations((u) => {
  seen.push(u);
});
// Files share one isolate (isolate: false): this file's watcher leaves with it, not piling up under the next ones.
afterAll(() => {
  unwatch();
});

beforeEach(() => {
  seen.length = 0;
});

afterEach(() => {
  const over = seen
    .filter((u) => u.refused > 0 || u.statements > PAID_STATEMENTS)
    .map((u) => `${u.label}: ${u.statements + u.refused} statements`);
  expect(over, 'invocations past the D1 statement limit of Workers Paid').toEqual([]);
});

/** For the test that shows the limit works: its deliberate overrun is not a failure. */
export function acknowledgeOverLimit(u: Usage): void {
  const i = seen.indexOf(u);
  if (i >= 0) seen.splice(i, 1);
}
