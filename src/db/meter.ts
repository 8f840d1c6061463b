// What one invocation asks of the platform, counted. Cloudflare cuts an invocation off at a fixed number of
// subrequests, and D1 queries are subrequests as well as Durable Object calls, R2, Vectorize, Workers AI and fetches
// to other hosts: one pool, 50 an invocation on Workers Free and 1,000 on Paid (the lower of the documented Paid
// figures: the D1 limits page says 1,000 queries, the Workers limits page 10,000 subrequests; docs/capacity.md).
// Local workerd enforces none of it, so the meter counts what each invocation sends:
// - an invocation is a scope opened at every entry point: the Worker's fetch and scheduled handlers
//   (src/index.ts), and every Durable Object's RPC methods and alarm (`meterDurableObject`, applied beside each
//   class; the JobDO opens one per step, labelled by the job's kind). A call into a Durable Object is a new
//   invocation with its own budget, as on the platform (the caller pays one subrequest for it);
// - D1 statements are counted by the metered binding every `db()` handle wraps (meter-d1.ts), each statement of a
//   batch as one; other subrequests by the bindings' metered faces (`countedStub` in each Durable Object's typed
//   accessor, `counted` for R2, Vectorize and Workers AI, `meteredFetch` for other hosts).
// Work an invocation leaves in `waitUntil` keeps its scope (AsyncLocalStorage follows the promises), as it keeps
// the platform's limit. The budget is the plan's (CAIRN_PLAN, parsed once in config.ts). In production the meter
// counts and logs an invocation that passes its budget; the tests set CAIRN_METER=refuse (vitest.config.ts), and
// the subrequest past the budget throws `SubrequestLimitError` instead, and test/worker/limits.ts fails the test.
// The job runner reads a step's count to stop it before its budget (src/jobs/step.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { configOf, type ConfigInput } from '../config';
import { log } from '../lib/log';

/** Subrequests one invocation may make on each Workers plan, D1 statements included. */
export const PLAN_SUBREQUESTS = { free: 50, paid: 1000 } as const;
export type Plan = keyof typeof PLAN_SUBREQUESTS;

/** One invocation's use of the platform. */
export interface Usage {
  /** What ran: `fetch POST /api/forget`, `job embed`, `session alarm`, `team enterWrite`, … */
  label: string;
  /** The plan whose budget applies. */
  plan: Plan;
  /** Subrequests this invocation may make: its plan's, or Paid's for an exempted operation (`exemptFromFree`). */
  budget: number;
  /** Why this invocation may pass Free's budget (an issue that reworks it), or null. */
  exemption: string | null;
  /** Whether passing the budget throws (tests) or is only counted and logged (production). */
  refuses: boolean;
  /** D1 statements sent: one per single statement, one per statement of a batch. */
  statements: number;
  /** Calls to D1 (a batch is one call). */
  calls: number;
  rowsRead: number;
  rowsWritten: number;
  /** FTS5 commands over a whole index ('optimize', 'rebuild', 'delete-all'): never on a request or in one step. */
  wholeIndex: string[];
  /** Subrequests other than D1 statements: Durable Object calls, R2, Vectorize, Workers AI, other hosts. */
  subrequests: number;
  /** Subrequests refused because the budget was spent (only when `refuses`). */
  refused: number;
  /** D1 statements refused for binding more than MAX_BOUND_PARAMETERS values. */
  overParameters: number;
  startedAt: number;
}

/** What counts against the budget: every subrequest, D1 statements included. */
export const spent = (u: Usage): number => u.statements + u.subrequests;

interface Scope {
  usage: Usage;
  /** The Durable Object instance whose entry point opened it (null: the Worker's handlers, a test). */
  owner: object | null;
  /** The over-budget line was logged (once an invocation). */
  logged: boolean;
}

const scope = new AsyncLocalStorage<Scope>();
const watchers = new Set<(u: Usage) => void>();

/** Calls `fn` with each invocation's usage as it opens (the object keeps counting while the invocation runs). */
export function watchInvocations(fn: (u: Usage) => void): () => void {
  watchers.add(fn);
  return () => watchers.delete(fn);
}

/** The plan and whether to refuse, from the settings (parsed once). Settings that do not parse count on Paid: the
 *  request then answers `invalid_config` itself. */
function profileOf(env: ConfigInput): { plan: Plan; refuses: boolean } {
  try {
    const c = configOf(env);
    return { plan: c.plan.name, refuses: c.meter.refuse };
  } catch {
    return { plan: 'paid', refuses: false };
  }
}

function open<T>(env: ConfigInput, label: string, owner: object | null, fn: () => T): T {
  const { plan, refuses } = profileOf(env);
  const usage: Usage = {
    label,
    plan,
    budget: PLAN_SUBREQUESTS[plan],
    exemption: null,
    refuses,
    statements: 0,
    calls: 0,
    rowsRead: 0,
    rowsWritten: 0,
    wholeIndex: [],
    subrequests: 0,
    refused: 0,
    overParameters: 0,
    startedAt: Date.now(),
  };
  for (const w of watchers) w(usage);
  return scope.run({ usage, owner, logged: false }, fn);
}

/** Runs `fn` as one invocation under `env`'s plan; inside one already, the outer scope keeps counting. */
export function metered<T>(env: ConfigInput, label: string, fn: () => T): T {
  if (scope.getStore()) return fn();
  return open(env, label, null, fn);
}

/**
 * A Durable Object's entry point: a new invocation, unless `owner` itself opened the current one (a method the
 * object calls on itself, as `admit` calls `enqueue`).
 */
export function invocation<T>(owner: object, env: ConfigInput, label: string, fn: () => T): T {
  if (scope.getStore()?.owner === owner) return fn();
  return open(env, label, owner, fn);
}

/** The current invocation's usage, if one is open. */
export const currentUsage = (): Usage | undefined => scope.getStore()?.usage;

/**
 * This invocation may spend Paid's budget even on Free: a whole-team or whole-server operation that does not fit
 * Free yet, named by the issue that reworks it. Production on Free still cuts it off at 50; the exemption only
 * keeps the tests' Free profile from failing while that work is under way, and lists it.
 */
export function exemptFromFree(reason: string): void {
  const u = scope.getStore()?.usage;
  if (!u) return;
  u.exemption = reason;
  u.budget = Math.max(u.budget, PLAN_SUBREQUESTS.paid);
}

export class SubrequestLimitError extends Error {
  constructor(u: Usage, what: string) {
    super(
      `${u.label}: ${what} would be subrequest ${spent(u) + 1} of one invocation; the ${u.plan} plan allows ` +
        `${u.budget}${u.exemption ? ` (exempted from Free: ${u.exemption})` : ''}, D1 statements included ` +
        '(production cuts it off here)',
    );
    this.name = 'SubrequestLimitError';
  }
}

/** Charges `n` subrequests of kind `what` to the current invocation, or refuses them past its budget. */
function spend(n: number, what: string): Usage | undefined {
  const s = scope.getStore();
  if (!s) return undefined;
  const u = s.usage;
  if (spent(u) + n > u.budget) {
    if (u.refuses) {
      u.refused += n;
      throw new SubrequestLimitError(u, what);
    }
    if (!s.logged) {
      s.logged = true;
      log('warn', 'invocation past its plan subrequest budget', {
        invocation: u.label,
        plan: u.plan,
        budget: u.budget,
        statements: u.statements,
        subrequests: u.subrequests,
      });
    }
  }
  return u;
}

/** Counts `statements` D1 statements (one call) into the current invocation, or refuses them. */
export function chargeStatements(statements: number): Usage | undefined {
  const u = spend(statements, statements === 1 ? 'a D1 statement' : `a batch of ${statements} D1 statements`);
  if (!u) return undefined;
  u.statements += statements;
  u.calls += 1;
  return u;
}

/** Counts a subrequest that is not a D1 statement (a Durable Object call, R2, Vectorize, Workers AI, a fetch). */
export function countSubrequest(n = 1, what = 'a subrequest'): void {
  const u = spend(n, what);
  if (u) u.subrequests += n;
}

/** Bound parameters one D1 statement may carry (D1 and Durable Object SQLite refuse the 101st). */
export const MAX_BOUND_PARAMETERS = 100;

export class ParameterLimitError extends Error {
  constructor(n: number, sql: string) {
    super(
      `a D1 statement binds ${n} parameters; D1 allows ${MAX_BOUND_PARAMETERS} ` +
        `(${sql.replace(/\s+/g, ' ').slice(0, 120)})`,
    );
    this.name = 'ParameterLimitError';
  }
}

/** Refuses a statement binding more than MAX_BOUND_PARAMETERS values, noted on the invocation (tests fail on it). */
export function checkParameters(n: number, sql: string): void {
  if (n <= MAX_BOUND_PARAMETERS) return;
  const u = scope.getStore()?.usage;
  if (u) u.overParameters += 1;
  for (const w of parameterWatchers) w(n, sql);
  throw new ParameterLimitError(n, sql);
}

const parameterWatchers = new Set<(n: number, sql: string) => void>();

/** Calls `fn` for every statement refused for its parameters, inside an invocation or not (tests). */
export function watchParameters(fn: (n: number, sql: string) => void): () => void {
  parameterWatchers.add(fn);
  return () => parameterWatchers.delete(fn);
}
