// A D1 binding that reports every statement it runs (its SQL, how many parameters it binds, the rows D1 says it
// read) and can refuse what production refuses: more than 100 bound parameters in one statement (D1's limit;
// local SQLite allows 32,766). Jobs run inline in a test get an env whose D1 bindings are spied this way
// (`spiedEnv`), so a test can count what a step asks of the database, statement by statement.
import type { CairnEnv } from '../../../src/env';

/** D1's limit on bound parameters per statement (developers.cloudflare.com/d1/platform/limits/). */
export const D1_MAX_PARAMS = 100;

export interface SpiedStatement {
  /** The binding's name in the env (`DB`, `DB_1`). */
  binding: string;
  sql: string;
  params: number;
  /** Rows D1 reports it read (a SELECT run through raw()/first() is asked again with all(), which reports it). */
  rowsRead: number;
}

export interface SpyOptions {
  /** Refuse a statement binding more parameters than this (as D1 does), before it runs. */
  maxParams?: number;
  /** Awaited before each call reaches D1 (a statement or a whole batch). */
  before?: (binding: string) => Promise<void> | void;
}

class TooManyParameters extends Error {
  constructor(sql: string, n: number, max: number) {
    super(`D1 refuses ${n} bound parameters (at most ${max}): ${sql.slice(0, 200)}`);
    this.name = 'TooManyParameters';
  }
}

const isSelect = (sql: string) => /^\s*(select|with)\b/i.test(sql);

class SpyStatement {
  constructor(
    readonly spy: Spy,
    readonly inner: D1PreparedStatement,
    readonly sql: string,
    readonly params: number,
  ) {}
  bind(...values: unknown[]): SpyStatement {
    this.spy.check(this.sql, values.length);
    return new SpyStatement(this.spy, this.inner.bind(...values), this.sql, values.length);
  }
  async #readCount(): Promise<number> {
    return isSelect(this.sql) ? ((await this.inner.all()).meta.rows_read ?? 0) : 0;
  }
  async first<T = unknown>(column?: string): Promise<T | null> {
    await this.spy.opts.before?.(this.spy.name);
    const out = column === undefined ? await this.inner.first<T>() : await this.inner.first<T>(column);
    this.spy.report(this, await this.#readCount());
    return out;
  }
  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    await this.spy.opts.before?.(this.spy.name);
    const r = await this.inner.run<T>();
    this.spy.report(this, r.meta.rows_read ?? 0);
    return r;
  }
  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    await this.spy.opts.before?.(this.spy.name);
    const r = await this.inner.all<T>();
    this.spy.report(this, r.meta.rows_read ?? 0);
    return r;
  }
  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    await this.spy.opts.before?.(this.spy.name);
    const out = options?.columnNames ? await this.inner.raw<T>({ columnNames: true }) : await this.inner.raw<T>();
    this.spy.report(this, await this.#readCount());
    return out as T[];
  }
}

class Spy {
  constructor(
    readonly name: string,
    readonly inner: D1Database,
    readonly seen: (s: SpiedStatement) => void,
    readonly opts: SpyOptions,
  ) {}
  check(sql: string, n: number): void {
    if (this.opts.maxParams !== undefined && n > this.opts.maxParams)
      throw new TooManyParameters(sql, n, this.opts.maxParams);
  }
  report(s: SpyStatement, rowsRead: number): void {
    this.seen({ binding: this.name, sql: s.sql, params: s.params, rowsRead });
  }
  prepare(query: string): SpyStatement {
    return new SpyStatement(this, this.inner.prepare(query), query, 0);
  }
  async batch<T = unknown>(statements: (D1PreparedStatement | SpyStatement)[]): Promise<D1Result<T>[]> {
    await this.opts.before?.(this.name);
    const inner = statements.map((s) => (s instanceof SpyStatement ? s.inner : s));
    const results = await this.inner.batch<T>(inner);
    statements.forEach((s, i) => {
      if (s instanceof SpyStatement) this.report(s, results[i]?.meta.rows_read ?? 0);
    });
    return results;
  }
  async exec(query: string): Promise<D1ExecResult> {
    await this.opts.before?.(this.name);
    return this.inner.exec(query);
  }
  withSession(c?: string): D1DatabaseSession {
    return this.inner.withSession(c);
  }
  dump(): Promise<ArrayBuffer> {
    return this.inner.dump();
  }
}

/** `d1` with every statement reported to `seen` (and refused past `maxParams`). */
export function spyD1(name: string, d1: D1Database, seen: (s: SpiedStatement) => void, opts: SpyOptions = {}) {
  return new Spy(name, d1, seen, opts) as unknown as D1Database;
}

/** `env` with each D1 binding (DB, DB_1, …) spied; everything else as it is. */
export function spiedEnv(env: CairnEnv, seen: (s: SpiedStatement) => void, opts: SpyOptions = {}): CairnEnv {
  const out: Record<string, unknown> = { ...env };
  for (const [k, v] of Object.entries(env)) {
    if (/^DB(_\d+)?$/.test(k) && v && typeof (v as D1Database).prepare === 'function')
      out[k] = spyD1(k, v as D1Database, seen, opts);
  }
  return out as unknown as CairnEnv;
}
