// drizzle-kit: generates D1 migrations from src/db/schema.ts into migrations/ (applied by wrangler as before).
// `npx drizzle-kit generate --name <what>` after changing the schema; FTS5 tables and triggers go in
// hand-written migrations (`npx drizzle-kit generate --custom --name <what>`). scripts/check-migrations.mjs
// (run by .ci/run) fails when the schema has changes no migration carries.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: process.env.DRIZZLE_OUT ?? './migrations',
});
