// Subrequests counted where they leave: an env whose Durable Object namespaces and R2 bucket count every call made
// on them (a stub's RPC method or fetch, a bucket operation), whoever makes it and whether or not the caller counts
// it into the statement meter (src/db/meter.ts counts D1 statements; Cloudflare counts D1 queries, DO calls and R2
// operations against the same per-invocation subrequest limit). Pass it where the code under test takes `env`.
import { env } from 'cloudflare:workers';
import type { CairnEnv } from '../../../src/env';

const NAMESPACES = ['SESSIONS', 'TEAMS', 'HUBS', 'LIMITERS', 'JOBS'] as const;

export interface Calls {
  /** Calls per binding (`JOBS`, `BACKUPS`, …). */
  by: Record<string, number>;
  total(): number;
  reset(): void;
}

/** Counts every call on `target`'s function properties (a stub's methods, a bucket's operations) into `calls`. */
function counted<T extends object>(target: T, binding: string, calls: Calls): T {
  return new Proxy(target, {
    get(t, key) {
      const v = Reflect.get(t, key) as unknown;
      if (typeof v !== 'function' || key === 'then') return v;
      // Called on the target itself (an RPC stub's method taken off it and applied does not serialize).
      return (...args: unknown[]) => {
        calls.by[binding] = (calls.by[binding] ?? 0) + 1;
        return (t as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>)[key]!(...args);
      };
    },
  });
}

/** `base` (the test's env by default) with its DO namespaces and BACKUPS counting every call; `calls` has the counts. */
export function countingEnv(base: CairnEnv = env as unknown as CairnEnv): { env: CairnEnv; calls: Calls } {
  const calls: Calls = {
    by: {},
    total: () => Object.values(calls.by).reduce((n, c) => n + c, 0),
    reset: () => {
      for (const k of Object.keys(calls.by)) delete calls.by[k];
    },
  };
  const out: Record<string, unknown> = { ...base };
  for (const name of NAMESPACES) {
    const ns = base[name] as unknown as Record<string, unknown>;
    out[name] = new Proxy(ns, {
      get(t, key) {
        const v = Reflect.get(t, key) as unknown;
        if (key !== 'get' && key !== 'getByName') return typeof v === 'function' ? v.bind(t) : v;
        return (...args: unknown[]) => counted((v as (...a: unknown[]) => object).apply(t, args), name, calls);
      },
    });
  }
  if (base.BACKUPS) out.BACKUPS = counted(base.BACKUPS, 'BACKUPS', calls);
  return { env: out as unknown as CairnEnv, calls };
}
