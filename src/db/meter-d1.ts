// The D1 binding as the data layer uses it: every statement counted into the invocation that sends it (meter.ts),
// each statement of a batch as one, and refused before it reaches D1 when it binds more than 100 parameters
// (D1 refuses it too, with an error a caller may catch and retry; this one is counted on the invocation, so the
// tests fail on it wherever it was caught). Applied by `db()` in client.ts to every binding.
import { checkParameters, chargeStatements, currentUsage } from './meter';

const WHOLE_INDEX = /VALUES\s*\(\s*'(optimize|rebuild|delete-all)'/i;

function charge(statements: number, sql: readonly string[]): void {
  const u = chargeStatements(statements);
  if (!u) return;
  for (const s of sql) {
    const m = WHOLE_INDEX.exec(s);
    if (m) u.wholeIndex.push(m[1]!.toLowerCase());
  }
}

function record(results: unknown): void {
  const u = currentUsage();
  if (!u) return;
  for (const r of Array.isArray(results) ? results : [results]) {
    const meta = (r as { meta?: { rows_read?: number; rows_written?: number } } | null)?.meta;
    u.rowsRead += meta?.rows_read ?? 0;
    u.rowsWritten += meta?.rows_written ?? 0;
  }
}

/** A prepared statement that counts itself when it runs; `bind` keeps the wrapper and checks the parameters. */
class MeteredStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    readonly sql: string,
  ) {}
  bind(...values: unknown[]): MeteredStatement {
    checkParameters(values.length, this.sql);
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
