// npm run deploy: build the static assets (hooks client, viewer), apply D1 migrations to the remote database, deploy the Worker.
// Needs a Cloudflare login (wrangler login or CLOUDFLARE_API_TOKEN); see README "Deploy to Cloudflare".
import { spawnSync } from 'node:child_process';
import { ROOT } from './dev-server.mjs';

const run = (cmd, args) => {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run('npm', ['run', 'build']);
run('npx', ['wrangler', 'd1', 'migrations', 'apply', 'DB', '--remote']);
run('npx', ['wrangler', 'deploy']);
