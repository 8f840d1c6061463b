// npm start: the whole service on this machine (wrangler dev, local D1 + Durable Objects), with a dev token.
import { randomBytes } from 'node:crypto';
import { PASSTHROUGH_VARS, mintDevToken, startDevServer } from './dev-server.mjs';

const port = Number(process.env.CAIRN_PORT ?? 8787);
const vars = {};
for (const k of PASSTHROUGH_VARS) if (process.env[k]) vars[k] = process.env[k];
vars.CAIRN_ADMIN_SECRET ??= `dev-${randomBytes(12).toString('hex')}`;

// The sentence model runs in this process (CAIRN_EMBEDDER=off leaves local search keyword-only).
const embedder = process.env.CAIRN_EMBEDDER !== 'off';
const server = await startDevServer({
  port,
  vars,
  embedder,
  stdio: ['ignore', 'inherit', 'inherit'],
  timeoutMs: 120_000,
});
const token = await mintDevToken(server.url, vars.CAIRN_ADMIN_SECRET);
const provider = vars.OBSERVER_PROVIDER || (vars.ANTHROPIC_API_KEY ? 'anthropic' : 'heuristic');
console.log(`
cairn is running at ${server.url}
  observer:     ${provider}
  search:       ${embedder ? 'keyword + sentence model (Universal Sentence Encoder lite, in this process)' : 'keyword only (CAIRN_EMBEDDER=off)'}
  dev token:    ${token}
  admin secret: ${vars.CAIRN_ADMIN_SECRET}

Connect Claude Code on this machine (in another terminal):
  npx cairn login --url ${server.url} --token ${token}
  npx cairn install
Press Ctrl+C to stop.`);

const shutdown = async () => {
  await server.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
