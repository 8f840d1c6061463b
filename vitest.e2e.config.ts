// `npm run test:e2e`: the real Claude Code CLI against wrangler dev (test/e2e). Kept out of `npm test` because
// it drives a few dozen real CLI sessions; .ci/run runs it after the main suite.
import { defineConfig } from 'vitest/config';

process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_SEND_METRICS ??= 'false';

export default defineConfig({
  test: {
    name: 'e2e',
    environment: 'node',
    include: ['test/e2e/**/*.test.ts'],
    globalSetup: ['./test/e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});
