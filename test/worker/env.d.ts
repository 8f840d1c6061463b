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
    /** Answers GET with the CREATE statements drizzle-kit derives from src/db/schema.ts (test/support/schema-ddl.ts). */
    SCHEMA_DDL: Fetcher;
  }
}
declare namespace Cloudflare {
  interface Env {
    /** The sentence model's service (scripts/sentence-embedder.mjs) as a service binding. */
    EMBEDDER: Fetcher;
  }
}
declare namespace Cloudflare {
  interface Env {
    /** The backup bucket (src/backup/): miniflare's local R2. */
    BACKUPS: R2Bucket;
  }
}
