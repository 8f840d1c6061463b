// What one invocation asks of D1, counted. Cloudflare cuts an invocation off at fixed limits (D1: 1,000 queries
// on Workers Paid, 50 on Free; docs/capacity.md), and local workerd enforces none of them, so every D1 binding
// the data layer uses is wrapped here (`meteredD1`, applied by `db()` in client.ts) and counts into the
// invocation it runs in. An invocation is a scope opened at an entry point (`metered`: the Worker's fetch and
// scheduled handlers, a job step, a Durable Object alarm); statements sent outside any scope are not counted.
// Work an invocation leaves in `waitUntil` keeps its scope (AsyncLocalStorage follows the promises), as it keeps
// the platform's limit. The job runner reads its step's count to stop a step before its budget
// (src/jobs/); tests set a limit, so a path that would be cut off in production fails there too.
import { AsyncLocalStorage } from 'node:async_hooks';

/** One invocation's use of D1 (and of other subrequests its callers count). */
export interface Usage {
  /** What ran: `fetch POST /api/forget`, `job embed`, `alarm session`, … */
  label: string;
  /** Statements sent: one per single statement, one per statement of a batch. */
  statements: number;
  /** Calls to D1 (a batch is one call). */
  calls: number;
  rowsRead: number;
  rowsWritten: number;
  /** FTS5 commands over a whole index ('optimize', 'rebuild', 'delete-all'): never allowed on a request or in one step. */
  wholeIndex: string[];
  /** Durable Object calls and other subrequests, as counted by their callers (`countSubrequest`). */
  subrequests: number;
  /** Statements refused because the limit was reached (only when a limit is set: tests). */
  refused: number;
  startedAt: number;
}

const scope = new AsyncLocalStorage<Usage>();
const watchers = new Set<(u: Usage) => void>();
let limit: number | null = null;

/** The statement limit enforced on every invocation (tests set the production one; null: count only). */
export function setStatementLimit(n: number | null): void {
  limit = n;
}

/** Calls `fn` with each invocation's usage as it opens (the object keeps counting while the invocation runs). */
export function watchInvocations(fn: (u: Usage) => void): () => void {
  watchers.add(fn);
  return () => watchers.delete(fn);
}

/** Runs `fn` as one invocation; inside one already, the outer scope keeps counting. */
export function metered<T>(label: string, fn: () => T): T {
  if (scope.getStore()) return fn();
  const usage: Usage = {
    label,
    statements: 0,
    calls: 0,
    rowsRead: 0,
    rowsWritten: 0,
    wholeIndex: [],
    subrequests: 0,
    refused: 0,
    startedAt: Date.now(),
  };
  for (const w of watchers) w(usage);
  return scope.run(usage, fn);
}

/** The current invocation's usage, if one is open. */
export const currentUsage = (): Usage | undefined => scope.getStore();

/** Counts a subrequest that is not a D1 statement (a Durable Object call). */
export function countSubrequest(n = 1): void {
  const u = scope.getStore();
  if (u) u.subrequests += n;
}

export class StatementLimitError extends Error {
  constructor(u: Usage, n: number) {
    super(`${u.label}: more than ${n} D1 statements in one invocation (production cuts it off here)`);
    this.name = 'StatementLimitError';
  }
}

const WHOLE_INDEX = /VALUES\s*\(\s*'(optimize|rebuild|delete-all)'/i;

function charge(statements: number, sql: readonly string[]): void {
  const u = scope.getStore();
  if (!u) return;
  if (limit !== null && u.statements + statements > limit) {
    u.refused += statements;
    throw new StatementLimitError(u, limit);
  }
  u.statements += statements;
  u.calls += 1;
  for (const s of sql) {
    const m = WHOLE_INDEX.exec(s);
    if (m) u.wholeIndex.push(m[1]!.toLowerCase());
  }
}

function record(results: unknown): void {
  const u = scope.getStore();
  if (!u) return;
  for (const r of Array.isArray(results) ? results : [results]) {
    const meta = (r as { meta?: { rows_read?: number; rows_written?: number } } | null)?.meta;
    u.rowsRead += meta?.rows_read ?? 0;
    u.rowsWritten += meta?.rows_written ?? 0;
  }
}

/** A prepared statement that counts itself when it runs; `bind` keeps the wrapper. */
class MeteredStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    readonly sql: string,
  ) {}
  bind(...values: unknown[]): MeteredStatement {
    return new MeteredStatement(this.inner.bind(...values), this.sql);
  }
  async first<T = unknown>(column?: string): Promise<T | null> {
    charge(1, [this.sql]);
    return column === undefined ? this.inner.first<T>() : this.inner.first<T>(column);
  }
  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    charge(1, [this.sql]);
    const r = await this.inner.run<T>();
    record(r);
    return r;
  }
  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    charge(1, [this.sql]);
    const r = await this.inner.all<T>();
    record(r);
    return r;
  }
  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    charge(1, [this.sql]);
    return (options?.columnNames ? this.inner.raw<T>({ columnNames: true }) : this.inner.raw<T>()) as Promise<T[]>;
  }
}

const unwrap = (s: D1PreparedStatement | MeteredStatement): D1PreparedStatement =>
  s instanceof MeteredStatement ? s.inner : s;

/** The binding with every statement counted into the current invocation. */
class MeteredD1 {
  constructor(readonly inner: D1Database) {}
  prepare(query: string): MeteredStatement {
    return new MeteredStatement(this.inner.prepare(query), query);
  }
  async batch<T = unknown>(statements: (D1PreparedStatement | MeteredStatement)[]): Promise<D1Result<T>[]> {
    charge(
      statements.length,
      statements.map((s) => (s instanceof MeteredStatement ? s.sql : '')),
    );
    const r = await this.inner.batch<T>(statements.map(unwrap));
    record(r);
    return r;
  }
  async exec(query: string): Promise<D1ExecResult> {
    const parts = query.split(';').filter((s) => s.trim() !== '');
    charge(Math.max(1, parts.length), parts);
    return this.inner.exec(query);
  }
  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return this.inner.withSession(constraintOrBookmark);
  }
  dump(): Promise<ArrayBuffer> {
    return this.inner.dump();
  }
}

const wrapped = new WeakMap<D1Database, D1Database>();

/** The metered face of a binding (one per binding); a binding already metered passes through. */
export function meteredD1(d1: D1Database): D1Database {
  if (d1 instanceof MeteredD1) return d1;
  let m = wrapped.get(d1);
  if (!m) {
    m = new MeteredD1(d1) as unknown as D1Database;
    wrapped.set(d1, m);
  }
  return m;
}
