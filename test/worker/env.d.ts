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
