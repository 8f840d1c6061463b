// Applies the D1 migrations once per test file's isolated storage, to every D1 binding: the directory (`DB`)
// and each further shard (`DB_1`, …) get the same schema, as `npm start` and deploy give them.
import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await applyD1Migrations(env.DB_1, env.TEST_MIGRATIONS);
