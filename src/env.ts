// The Worker's bindings and settings, one place for their names and types.
// The Durable Object namespaces are declared untyped on purpose: each DO module exports a typed accessor
// (sessionStub, teamStub, hubStub, limiterStub), so this file imports nothing and sits below every module.

export interface CairnEnv {
  DB: D1Database;
  /** Built files (hooks client, viewer code): dist/assets, written by scripts/build.mjs. */
  ASSETS: Fetcher;
  SESSIONS: DurableObjectNamespace;
  TEAMS: DurableObjectNamespace;
  HUBS: DurableObjectNamespace;
  LIMITERS: DurableObjectNamespace;
  VECTORS?: VectorizeIndex;
  AI?: Ai;
  /** "1" in wrangler dev and tests: use the local vector index and embedder. */
  CAIRN_LOCAL?: string;
  CAIRN_ADMIN_SECRET?: string;
  CAIRN_MODE?: string;
  OBSERVER_PROVIDER?: string;
  OBSERVER_MODEL?: string;
  OBSERVER_CONCURRENCY?: string;
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  /** Per-token requests per minute (defaults 600 ingest, 120 read); teams may only lower them. */
  RATE_LIMIT_INGEST_PER_MIN?: string;
  RATE_LIMIT_READ_PER_MIN?: string;
  /** Seconds an ended, fully observed session's Durable Object keeps its storage (default 86400). */
  SESSION_RETENTION_SECONDS?: string;
}

declare global {
  namespace Cloudflare {
    interface Env extends CairnEnv {}
  }
}

