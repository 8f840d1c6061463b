// The benchmarks' injected D1 latency (src/db/latency.ts) is a local-only seam: with CAIRN_LOCAL=1 and
// CAIRN_BENCH_D1_LATENCY_MS every binding the data layer hands out waits before each round trip (and answers as
// before); without CAIRN_LOCAL the setting does nothing, so no deployment can slow itself by it.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { directoryDb, shardDb } from '../../../src/db/shards';
import type { CairnEnv } from '../../../src/env';

describe('the injected D1 latency of the benchmarks', () => {
  it('wraps every binding in local runs only, and the wrapped binding answers as the binding does', async () => {
    const slow = { ...env, CAIRN_BENCH_D1_LATENCY_MS: '5' } as unknown as CairnEnv;
    const deployed = { ...env, CAIRN_LOCAL: '', CAIRN_BENCH_D1_LATENCY_MS: '5' } as unknown as CairnEnv;
    expect(configOf(slow).benchD1LatencyMs).toBe(5);
    expect(configOf(deployed).benchD1LatencyMs).toBe(0);
    expect(directoryDb(deployed)).toBe(env.DB);
    expect(shardDb(deployed, 'DB_1')).toBe(env.DB_1);
    expect(directoryDb(env)).toBe(env.DB);
    const d = directoryDb(slow);
    expect(d).not.toBe(env.DB);
    // One wrapper per binding: the directory and the shard `DB` are the same object, as without latency.
    expect(shardDb(slow, 'DB')).toBe(d);
    expect(await d.prepare('SELECT 41 + ? AS n').bind(1).first<{ n: number }>()).toEqual({ n: 42 });
    const [a, b] = await d.batch([d.prepare('SELECT 1 AS n'), d.prepare('SELECT 2 AS n')]);
    expect([a!.results, b!.results]).toEqual([[{ n: 1 }], [{ n: 2 }]]);
  });
});
