// The deployment's settings, parsed once from the Worker environment (vars and secrets are strings) into
// one typed object. Everything else reads `configOf(env)`, never a raw `env.X` string.
import * as z from 'zod';
import { AppError } from './lib/errors';

/** An unset or empty variable means "use the default"; anything else must parse. */
const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const text = () => z.preprocess(blankToUndefined, z.string().trim().optional());
const positiveInt = (fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(blankToUndefined, z.coerce.number().int().min(1).max(max).default(fallback));

export const DEFAULT_RATE_LIMITS = { ingest: 600, read: 120 } as const;
export const DEFAULT_OBSERVER_CONCURRENCY = 4;

const ConfigSchema = z
  .object({
    CAIRN_LOCAL: text(),
    CAIRN_ADMIN_SECRET: text(),
    CAIRN_MODE: text(),
    CAIRN_EMBEDDER_URL: z.preprocess(blankToUndefined, z.string().trim().url().optional()),
    OBSERVER_PROVIDER: z.preprocess(
      (v) => (typeof v === 'string' ? blankToUndefined(v.trim().toLowerCase()) : v),
      z.enum(['anthropic', 'openai', 'workers-ai', 'heuristic']).optional(),
    ),
    OBSERVER_MODEL: text(),
    OBSERVER_READONLY_MODEL: text(),
    OBSERVER_CONCURRENCY: positiveInt(DEFAULT_OBSERVER_CONCURRENCY, 64),
    /** The observer model's window in tokens, for a model src/observer/window.ts does not know (unset: its table). */
    OBSERVER_CONTEXT_TOKENS: z.preprocess(
      blankToUndefined,
      z.coerce.number().int().min(4_096).max(10_000_000).optional(),
    ),
    ANTHROPIC_API_KEY: text(),
    ANTHROPIC_BASE_URL: text(),
    OPENAI_API_KEY: text(),
    OPENAI_BASE_URL: text(),
    RATE_LIMIT_INGEST_PER_MIN: positiveInt(DEFAULT_RATE_LIMITS.ingest),
    RATE_LIMIT_READ_PER_MIN: positiveInt(DEFAULT_RATE_LIMITS.read),
    /** The Workers plan the deployment runs on: its per-invocation limits size every job step (docs/capacity.md). */
    CAIRN_PLAN: z.preprocess(
      (v) => (typeof v === 'string' ? blankToUndefined(v.trim().toLowerCase()) : v),
      z.enum(['paid', 'free']).default('paid'),
    ),
    /**
     * Tests only (vitest.config.ts): `refuse` makes the subrequest past an invocation's budget throw instead of being
     * counted and logged (src/db/meter.ts), so a path production would cut off fails its test.
     */
    CAIRN_METER: z.preprocess(
      (v) => (typeof v === 'string' ? blankToUndefined(v.trim().toLowerCase()) : v),
      z.enum(['count', 'refuse']).default('count'),
    ),
    /**
     * Benchmarks only: ms waited before every D1 round trip (src/db/latency.ts), standing in for the distance
     * between a Worker and its database; honoured only with CAIRN_LOCAL=1.
     */
    CAIRN_BENCH_D1_LATENCY_MS: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(10_000).optional()),
    /** D1 statements one job step may send (default 200 on Paid, 40 on Free). */
    JOB_STEP_STATEMENTS: z.preprocess(blankToUndefined, z.coerce.number().int().min(10).max(1000).optional()),
    /** Complete backups each team keeps in the BACKUPS bucket (src/backup/); older ones are deleted. */
    BACKUP_KEEP: positiveInt(7, 1000),
    /** D1 bindings that take new teams, comma-separated (src/db/shards.ts); default the directory, `DB`. */
    SHARD_NEW_TEAMS: z.preprocess(
      blankToUndefined,
      z
        .string()
        .transform((v) => [
          ...new Set(
            v
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          ),
        ])
        .pipe(
          z.array(z.string().regex(/^DB(?:_[1-9]\d{0,3})?$/, 'shard names are D1 bindings: DB, DB_1, DB_2, …')).min(1),
        )
        .default(['DB']),
    ),
  })
  .transform((e) => ({
    /** wrangler dev and tests: the local vector index and embedder instead of Vectorize + Workers AI. */
    local: e.CAIRN_LOCAL === '1',
    /** Benchmarks only: ms waited before each D1 round trip (0: none; never outside local runs). */
    benchD1LatencyMs: e.CAIRN_LOCAL === '1' ? (e.CAIRN_BENCH_D1_LATENCY_MS ?? 0) : 0,
    /**
     * Local runs only: where the sentence model started beside the local stack answers (scripts/sentence-embedder.mjs).
     * Unset, local search has no semantic channel and is keyword search.
     */
    embedderUrl: e.CAIRN_EMBEDDER_URL,
    adminSecret: e.CAIRN_ADMIN_SECRET,
    mode: e.CAIRN_MODE ?? 'code',
    observer: {
      provider: e.OBSERVER_PROVIDER,
      model: e.OBSERVER_MODEL,
      /** Asked instead of `model` for turns whose tool calls all only read (unset: off). */
      readOnlyModel: e.OBSERVER_READONLY_MODEL,
      concurrency: e.OBSERVER_CONCURRENCY,
      contextTokens: e.OBSERVER_CONTEXT_TOKENS,
      anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseURL: e.ANTHROPIC_BASE_URL },
      openai: { apiKey: e.OPENAI_API_KEY, baseURL: e.OPENAI_BASE_URL },
    },
    rateLimits: { ingest: e.RATE_LIMIT_INGEST_PER_MIN, read: e.RATE_LIMIT_READ_PER_MIN },
    shards: { newTeams: e.SHARD_NEW_TEAMS },
    /** The daily backup (on only when an R2 bucket is bound as BACKUPS). */
    backups: { keep: e.BACKUP_KEEP },
    /** The plan whose per-invocation budget the meter counts against (src/db/meter.ts: 50 on Free, 1,000 on Paid). */
    plan: { name: e.CAIRN_PLAN },
    meter: { refuse: e.CAIRN_METER === 'refuse' },
    /** What one job step may use (src/jobs/): well inside one invocation's budget. */
    jobStep: {
      statements: e.JOB_STEP_STATEMENTS ?? (e.CAIRN_PLAN === 'free' ? 40 : 200),
      ms: 5_000,
      bytes: 16 * 1024 * 1024,
      /** Every subrequest of the step, its D1 statements included (one pool, as the platform counts them). */
      subrequests: e.CAIRN_PLAN === 'free' ? 40 : 300,
    },
  }));

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = Partial<Record<keyof z.input<typeof ConfigSchema>, string>>;

/** A deployment whose settings do not parse answers every request that needs them with this (and the log). */
export class ConfigError extends AppError {
  constructor(message: string) {
    super(500, 'invalid_config', message);
    this.name = 'ConfigError';
  }
}

/** Parses the settings; a value that does not parse names itself instead of silently becoming a default. */
export function parseConfig(env: ConfigInput): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  console.error('invalid cairn settings', issues);
  throw new ConfigError(`The server's settings are invalid (${issues}); the operator must fix them.`);
}

// The env object lives as long as its isolate (or Durable Object), so one parse serves every request.
const cache = new WeakMap<object, Config>();

export function configOf(env: ConfigInput): Config {
  let c = cache.get(env);
  if (!c) {
    c = parseConfig(env);
    cache.set(env, c);
  }
  return c;
}
