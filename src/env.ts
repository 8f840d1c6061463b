// The Worker's bindings and settings, one place for their names and types.
// Bindings and [vars] come from wrangler.toml through `npm run types` (worker-configuration.d.ts, checked in
// CI with `wrangler types --check`); secrets and optional settings that wrangler.toml does not list are
// declared here. Values are strings: src/config.ts parses them once into a typed Config.
// This file imports nothing and sits below every module; features reach a Durable Object through the typed
// accessor beside its class (sessionStub, teamStub, hubStub, limiterStub).

/** Settings given as secrets or process env (npm start passes them through); all optional. */
export interface CairnSecrets {
  /** "1" in wrangler dev and tests: use the local vector index and embedder. */
  CAIRN_LOCAL?: string;
  CAIRN_ADMIN_SECRET?: string;
  /** Local runs: the URL of the sentence model's service started beside wrangler dev (npm start, benchmarks). */
  CAIRN_EMBEDDER_URL?: string;
  /** JSON price table overrides for observer usage estimates (see src/observer/prices.ts). */
  OBSERVER_PRICES?: string;
  /** Benchmark sweeps only: replaces the configured vector weight of the default search (0–1). */
  CAIRN_VECTOR_WEIGHT?: string;
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  /** Per-token requests per minute (defaults 600 ingest, 120 read); teams may only lower them. */
  RATE_LIMIT_INGEST_PER_MIN?: string;
  RATE_LIMIT_READ_PER_MIN?: string;
  /** `paid` (default) or `free`: the Workers plan, whose per-invocation budget the meter counts and job steps fit. */
  CAIRN_PLAN?: string;
  /** Tests only: `refuse` makes an invocation past its plan's subrequest budget throw (src/db/meter.ts). */
  CAIRN_METER?: string;
  /** D1 statements a job step may send (default 200 on Paid, 40 on Free). */
  JOB_STEP_STATEMENTS?: string;
  /** Complete backups a team keeps in the BACKUPS bucket (default 7). */
  BACKUP_KEEP?: string;
  /** Seconds an ended, fully observed session's Durable Object keeps its storage (default 86400). */
  SESSION_RETENTION_SECONDS?: string;
}

/** Generated bindings, except that local runs have no Vectorize or Workers AI (their config drops them). */
/** BACKUPS: an R2 bucket for the daily backup, bound only by an operator who wants it (wrangler.toml, commented). */
export type CairnEnv = Omit<Cloudflare.Env, 'VECTORS' | 'AI'> &
  CairnSecrets & { VECTORS?: VectorizeIndex; AI?: Ai; BACKUPS?: R2Bucket };

declare global {
  namespace Cloudflare {
    interface Env extends CairnSecrets {}
  }
}
