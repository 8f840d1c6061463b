// npm run deploy: build the static assets (hooks client, viewer), apply D1 migrations to the remote database, deploy the Worker.
// Needs a Cloudflare login (wrangler login or CLOUDFLARE_API_TOKEN); see README "Deploy to Cloudflare".
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, d1Bindings } from './dev-server.mjs';

const run = (cmd, args) => {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run('npm', ['run', 'build']);
// Every D1 binding (the directory `DB` and each shard `DB_1`, …) carries the same schema.
for (const binding of d1Bindings(readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8'))) {
  run('npx', ['wrangler', 'd1', 'migrations', 'apply', binding, '--remote']);
}
run('npx', ['wrangler', 'deploy']);
