// The deployment's settings: parsed once from strings into one typed object, with defaults and loud errors.
import { describe, expect, it } from 'vitest';
import { ConfigError, configOf, parseConfig } from '../../../src/config';

describe('parseConfig', () => {
  it('gives every setting its default when nothing is set, as wrangler.toml leaves them', () => {
    const c = parseConfig({
      OBSERVER_PROVIDER: '',
      OBSERVER_MODEL: '',
      OBSERVER_READONLY_MODEL: '',
      CAIRN_MODE: 'code',
      OBSERVER_CONCURRENCY: '4',
    });
    expect(c).toEqual({
      local: false,
      adminSecret: undefined,
      mode: 'code',
      embedderUrl: undefined,
      observer: {
        provider: undefined,
        model: undefined,
        readOnlyModel: undefined,
        concurrency: 4,
        contextTokens: undefined,
        anthropic: { apiKey: undefined, baseURL: undefined },
        openai: { apiKey: undefined, baseURL: undefined },
      },
      rateLimits: { ingest: 600, read: 120 },
      shards: { newTeams: ['DB'] },
      backups: { keep: 7 },
      benchD1LatencyMs: 0,
      plan: { name: 'paid' },
      meter: { refuse: false },
      jobStep: { statements: 200, ms: 5_000, bytes: 16 * 1024 * 1024, subrequests: 300 },
    });
  });

  it('reads the plan the meter counts against, and refuses past it only when the tests ask (CAIRN_METER)', () => {
    const free = parseConfig({ CAIRN_PLAN: ' Free ', CAIRN_METER: 'refuse' });
    expect(free.plan).toEqual({ name: 'free' });
    expect(free.meter).toEqual({ refuse: true });
    // A Free step: 40 D1 statements, and 40 subrequests in all (its statements included), under the 50 of an invocation.
    expect(free.jobStep).toMatchObject({ statements: 40, subrequests: 40 });
    expect(parseConfig({ CAIRN_METER: 'count' }).meter.refuse).toBe(false);
    expect(() => parseConfig({ CAIRN_METER: 'loud' })).toThrow(/CAIRN_METER/);
    expect(() => parseConfig({ CAIRN_PLAN: 'pro' })).toThrow(/CAIRN_PLAN/);
  });

  it('reads SHARD_NEW_TEAMS as a list of D1 binding names, and refuses anything else', () => {
    expect(parseConfig({ SHARD_NEW_TEAMS: ' DB_1, DB,DB_1 ' }).shards.newTeams).toEqual(['DB_1', 'DB']);
    for (const bad of ['DB_0', 'db_1', 'SESSIONS', ','])
      expect(() => parseConfig({ SHARD_NEW_TEAMS: bad }), bad).toThrow(/SHARD_NEW_TEAMS/);
  });

  it('turns strings into numbers, flags and a lower-cased provider name', () => {
    const c = parseConfig({
      CAIRN_LOCAL: '1',
      OBSERVER_PROVIDER: ' Anthropic ',
      RATE_LIMIT_INGEST_PER_MIN: '30',
      OBSERVER_MODEL: ' m ',
      OBSERVER_READONLY_MODEL: ' small ',
    });
    expect(c.local).toBe(true);
    expect(c.observer.provider).toBe('anthropic');
    expect(c.observer.model).toBe('m');
    expect(c.observer.readOnlyModel).toBe('small');
    expect(c.rateLimits.ingest).toBe(30);
  });

  it('names every setting that does not parse instead of quietly using a default', () => {
    let err: unknown;
    try {
      parseConfig({ OBSERVER_PROVIDER: 'gpt', RATE_LIMIT_READ_PER_MIN: '-3' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('invalid_config');
    expect((err as ConfigError).message).toMatch(/OBSERVER_PROVIDER/);
    expect((err as ConfigError).message).toMatch(/RATE_LIMIT_READ_PER_MIN/);
  });

  it('parses one environment object once and reuses the result', () => {
    const env = { RATE_LIMIT_READ_PER_MIN: '7' };
    expect(configOf(env)).toBe(configOf(env));
    expect(configOf({ RATE_LIMIT_READ_PER_MIN: '8' }).rateLimits.read).toBe(8);
  });
});
