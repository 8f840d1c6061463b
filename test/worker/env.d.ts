// Test-only bindings added by vitest.config.ts.
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import('cloudflare:test').D1Migration[];
  }
}
declare namespace Cloudflare {
  interface Env {
    FAKE_LLM_URL: string;
  }
}
declare namespace Cloudflare {
  interface Env {
    /** CREATE statements drizzle-kit derives from src/db/schema.ts. */
    SCHEMA_DDL: string[];
  }
}
declare namespace Cloudflare {
  interface Env {
    /** The sentence model's service (scripts/sentence-embedder.mjs) as a service binding. */
    EMBEDDER: Fetcher;
  }
}
