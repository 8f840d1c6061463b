// A D1 binding that waits before every round trip: the benchmarks' stand-in for the distance between a Worker and
// its database in production (80–150 ms between regions; local D1 answers in well under a millisecond, so what a
// design costs in round trips never shows here otherwise). Only local runs can ask for it
// (CAIRN_BENCH_D1_LATENCY_MS with CAIRN_LOCAL=1, config.ts); src/db/shards.ts hands it out as every binding.
const slowed = new WeakMap<D1Database, D1Database>();

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `d1` with `ms` waited before each statement and each batch (one round trip each), the same object every time. */
export function withLatency(d1: D1Database, ms: number): D1Database {
  if (ms <= 0) return d1;
  let s = slowed.get(d1);
  if (!s) {
    s = new SlowD1(d1, ms) as unknown as D1Database;
    slowed.set(d1, s);
  }
  return s;
}

class SlowStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    readonly ms: number,
  ) {}
  bind(...values: unknown[]): SlowStatement {
    return new SlowStatement(this.inner.bind(...values), this.ms);
  }
  async first<T = unknown>(column?: string): Promise<T | null> {
    await wait(this.ms);
    return column === undefined ? this.inner.first<T>() : this.inner.first<T>(column);
  }
  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    await wait(this.ms);
    return this.inner.run<T>();
  }
  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    await wait(this.ms);
    return this.inner.all<T>();
  }
  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    await wait(this.ms);
    return (options?.columnNames ? this.inner.raw<T>({ columnNames: true }) : this.inner.raw<T>()) as Promise<T[]>;
  }
}

class SlowD1 {
  constructor(
    readonly inner: D1Database,
    readonly ms: number,
  ) {}
  prepare(query: string): SlowStatement {
    return new SlowStatement(this.inner.prepare(query), this.ms);
  }
  async batch<T = unknown>(statements: (D1PreparedStatement | SlowStatement)[]): Promise<D1Result<T>[]> {
    await wait(this.ms);
    return this.inner.batch<T>(statements.map((s) => (s instanceof SlowStatement ? s.inner : s)));
  }
  async exec(query: string): Promise<D1ExecResult> {
    await wait(this.ms);
    return this.inner.exec(query);
  }
  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return this.inner.withSession(constraintOrBookmark);
  }
  dump(): Promise<ArrayBuffer> {
    return this.inner.dump();
  }
}
