// Another team while a team moves (issue 27: a forced move of 2,000 observations held /api/health 51 s). On a
// snapshot wrangler dev: team "mover" gets 2,000 observations through the import, then a bystander team keeps
// sending an event, asking for its context, searching and asking /api/health, first with nothing else running
// (before) and then while the operator's forced move of "mover" to DB_1 runs as its job (during). Per phase: the
// bystander's requests, p50/p95/max, how many took over 2 s and how many answered 5xx. Exits 1 if any request
// during the move answered 5xx. Writes the "move-bystander" section of BENCHMARKS.md.
import { loadavg } from 'node:os';
import { writeSection } from './retrieval/harness.mjs';
import { freePort, mintDevToken, startDevServer } from '../scripts/dev-server.mjs';

const OBSERVATIONS = 2_000;
const PART = 240;
const BOUND_MS = 2_000;
const BEFORE_ROUNDS = 40;
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

async function send(url, token, method, path, body, raw) {
  const init = { method, headers: { authorization: `Bearer ${token}` } };
  if (body !== undefined || raw !== undefined) {
    init.headers['content-type'] = raw === undefined ? 'application/json' : 'application/x-ndjson';
    init.body = raw ?? JSON.stringify(body);
  }
  const t0 = performance.now();
  const phase = phaseNow;
  const res = await fetch(`${url}${path}`, init);
  const text = await res.text();
  const route = `${method} ${path.split('?')[0]}`;
  return { status: res.status, ms: performance.now() - t0, text, route, at: t0, phase: `${phase}→${phaseNow}` };
}

/** The mover's memory as import parts: one project, one session, OBSERVATIONS observations. */
function parts() {
  const T0 = Date.parse('2026-05-04T09:00:00Z');
  const head = [
    { kind: 'project', key: 'github.com/bench/mover', visibility: 'team', owner: null, created_at: T0 },
    {
      kind: 'session',
      session_key: 'mover-1',
      project: 'github.com/bench/mover',
      user: 'owner',
      platform: 'claude-code',
      prompt_count: 1,
      started_at: T0,
      ended_at: null,
    },
  ];
  const obs = Array.from({ length: OBSERVATIONS }, (_, i) => ({
    kind: 'observation',
    session_key: 'mover-1',
    prompt_number: 1,
    prompt_id: null,
    author: 'owner',
    created_at: T0 + i,
    type: 'discovery',
    title: `Mover fact ${i}`,
    subtitle: null,
    facts: [`the cache key ${i} needs the locale`],
    narrative: `Observation ${i} of the mover's memory, about the build cache and its key.`,
    concepts: ['cache'],
    files_read: [`src/cache/${i % 50}.ts`],
    files_modified: [],
    discovery_tokens: 0,
    content_hash: `mover-${i}`,
    agent_id: null,
    agent_type: null,
    source: 'observer',
  }));
  const out = [];
  for (let i = 0; i < obs.length; i += PART - 2)
    out.push([...head, ...obs.slice(i, i + PART - 2)].map((r) => JSON.stringify(r)).join('\n'));
  return out;
}

/** The move's phase as last seen by `follow` (each slow bystander request is reported with it). */
let phaseNow = 'before';

async function follow(url, token, path, pick = (b) => b.job) {
  for (;;) {
    const r = await send(url, token, 'GET', path);
    const job = pick(JSON.parse(r.text));
    if (job.progress?.phase && job.progress.phase !== phaseNow) {
      phaseNow = job.progress.phase;
      if (process.env.BENCH_MOVE_PHASES) log('phase', phaseNow);
    }
    if (['done', 'failed', 'cancelled'].includes(job.status)) return job;
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** One bystander round: an event, its context, a search and /api/health, one after another. */
async function round(url, token, i) {
  const event = {
    event_id: `ev-${process.pid}-${i}`,
    session_id: `by-${process.pid}`,
    project: 'github.com/bench/bystander',
    cwd: '/home/c/b',
    occurred_at: Date.now(),
    tool_name: 'Bash',
    tool_input: { command: `npm test ${i}` },
    tool_response: { stdout: 'ok', exit_code: 0 },
  };
  return [
    await send(url, token, 'POST', '/api/sessions/observations', event),
    await send(url, token, 'GET', '/api/context?project=github.com%2Fbench%2Fbystander&tz=UTC'),
    await send(url, token, 'GET', '/api/search?q=cache'),
    await send(url, token, 'GET', '/api/health'),
  ];
}

const pct = (xs, p) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : 0;
const summary = (rs) => {
  const ms = rs.map((r) => r.ms);
  return {
    n: rs.length,
    p50: pct(ms, 50),
    p95: pct(ms, 95),
    max: Math.max(0, ...ms),
    over: ms.filter((m) => m > BOUND_MS).length,
    s5xx: rs.filter((r) => r.status >= 500).length,
  };
};

async function main() {
  const port = await freePort();
  const secret = `move-${Math.random().toString(36).slice(2)}`;
  log('starting wrangler dev on port', port);
  const server = await startDevServer({
    port,
    snapshot: true,
    timeoutMs: 300_000,
    vars: { CAIRN_ADMIN_SECRET: secret },
  });
  try {
    const { url } = server;
    const mover = await mintDevToken(url, secret, { team: 'mover', user: 'owner', device: 'box' });
    const bystander = await mintDevToken(url, secret, { team: 'bystanders', user: 'carol', device: 'carol-box' });
    for (const [i, part] of parts().entries()) {
      const r = await send(url, mover, 'POST', '/api/admin/import', undefined, part);
      // 200: stored in the request; 202: a job writes the rest (a server before issue 35's import, or Workers Free).
      if (r.status !== 200 && r.status !== 202) throw new Error(`import part ${i}: ${r.status} ${r.text}`);
      if (r.status === 202) {
        const job = await follow(url, mover, `/api/jobs/${JSON.parse(r.text).job.id}`);
        if (job.status !== 'done') throw new Error(`import part ${i}: ${JSON.stringify(job)}`);
      }
    }
    // Since issue 35 the import leaves the vectors to the team's embed job (after the last part): it runs here, before
    // the bystander's first round, as the import's own embedding did before.
    const imported = JSON.parse((await send(url, mover, 'GET', '/api/admin/jobs?kind=embed&limit=1')).text).jobs[0];
    if (imported) await follow(url, mover, `/api/admin/jobs/${imported.id}`);
    log(`mover has ${OBSERVATIONS} observations`);
    const before = [];
    for (let i = 0; i < BEFORE_ROUNDS; i++) before.push(...(await round(url, bystander, i)));
    log('before', summary(before));

    const t0 = performance.now();
    const started = await fetch(`${url}/api/admin/teams/mover/move`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ shard: 'DB_1', force: true }),
    });
    if (started.status !== 202) throw new Error(`move: ${started.status} ${await started.text()}`);
    const jobId = (await started.json()).job.id;
    let job = null;
    const during = [];
    const moving = follow(url, secret, `/api/admin/teams/mover/jobs/${jobId}`).then((j) => (job = j));
    let i = BEFORE_ROUNDS;
    for (; job === null; i++) during.push(...(await round(url, bystander, i)));
    await moving;
    const moveMs = performance.now() - t0;
    // The move ends by starting an `embed` job for the moved rows: the bystander keeps going until it is done too.
    phaseNow = 'embed-job';
    const listed = await send(url, mover, 'GET', '/api/admin/jobs?kind=embed&limit=1');
    const embedId = JSON.parse(listed.text).jobs[0]?.id;
    let embed = embedId ? null : { status: 'none' };
    const embedding = embedId
      ? follow(url, mover, `/api/admin/jobs/${embedId}`).then((j) => (embed = j))
      : Promise.resolve();
    const after = [];
    for (; embed === null; i++) after.push(...(await round(url, bystander, i)));
    await embedding;
    const embedMs = performance.now() - t0 - moveMs;
    const all = [...during, ...after];
    const top = [...all].sort((a, b) => b.ms - a.ms).slice(0, 8);
    for (const r of top) log('slow', r.route, Math.round(r.ms), 'ms at', ((r.at - t0) / 1000).toFixed(1), 's', r.phase);
    log('during', summary(during), 'move', job.status, `${Math.round(moveMs)} ms`, job.stats?.steps, 'steps');
    log('embed', summary(after), embed.status, `${Math.round(embedMs)} ms`, embed.stats?.steps, 'steps');

    const slow = all
      .filter((r) => r.ms > BOUND_MS)
      .map(
        (r) => `${r.route} ${Math.round(r.ms)} ms at ${((r.at - t0) / 1000).toFixed(1)} s into the move (${r.phase})`,
      );
    const row = (name, s) =>
      `| ${name} | ${s.n} | ${Math.round(s.p50)} | ${Math.round(s.p95)} | ${Math.round(s.max)} | ${s.over} | ${s.s5xx} |`;
    const [b, d, e] = [summary(before), summary(during), summary(after)];
    writeSection(
      'move-bystander',
      `
## Another team while a team moves (\`npm run bench move-bystander\` → bench/move-bystander.bench.mjs)

A snapshot wrangler dev, load average ${loadavg()[0].toFixed(1)} at the end. Team "mover" holds ${OBSERVATIONS} imported observations; a bystander team
sends an event, asks for its context, searches and asks \`/api/health\`, one after another: ${BEFORE_ROUNDS} rounds with nothing else running
(before), then rounds for as long as the operator's forced move of "mover" to DB_1 runs as its job (${job.stats?.steps ?? '?'} steps,
${(moveMs / 1000).toFixed(1)} s from the request to the job's end, the old rows' delete after the shard memo's 30 s included; ${job.status}),
and then for as long as the \`embed\` job the move starts for the moved rows runs (${embed.stats?.steps ?? '?'} steps, ${(embedMs / 1000).toFixed(1)} s; ${embed.status};
locally the offline hashed embedder, which computes in the same workerd process as every request).
Before the move was a job (issue 27, c8afa80) the same forced move held \`/api/health\` for 51 s.

| bystander | requests | p50 ms | p95 ms | max ms | over 2 s | 5xx |
|---|---|---|---|---|---|---|
${row('before (alone)', b)}
${row('during the move', d)}
${row('during the embed job it starts', e)}

Over 2 s during the move: ${slow.length ? slow.join('; ') : 'none'}.
`,
    );
    if (d.s5xx + e.s5xx > 0 || job.status !== 'done') process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
