// The Worker's bindings and settings, one place for their names and types.
import type { SessionDO } from './session/session-do';
import type { TeamDO } from './teams/team-do';
import type { HubDO } from './live/hub-do';
import type { LimiterDO } from './teams/limiter-do';

export interface CairnEnv {
  DB: D1Database;
  /** Built files (hooks client, viewer code): dist/assets, written by scripts/build.mjs. */
  ASSETS: Fetcher;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  TEAMS: DurableObjectNamespace<TeamDO>;
  HUBS: DurableObjectNamespace<HubDO>;
  LIMITERS: DurableObjectNamespace<LimiterDO>;
  VECTORS?: VectorizeIndex;
  AI?: Ai;
  /** "1" in wrangler dev and tests: use the local vector index and embedder. */
  CAIRN_LOCAL?: string;
  CAIRN_ADMIN_SECRET?: string;
  CAIRN_MODE?: string;
  /** Benchmark sweeps only: replaces the configured vector weight of the default search (0–1). */
  CAIRN_VECTOR_WEIGHT?: string;
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
}

declare global {
  namespace Cloudflare {
    interface Env extends CairnEnv {}
  }
}

export type AppEnv = { Bindings: CairnEnv; Variables: { auth: import('./auth/types').AuthContext } };
