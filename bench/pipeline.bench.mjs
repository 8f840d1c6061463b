// Pipeline benchmarks, written into the "pipeline" section of BENCHMARKS.md:
// 1. ingest through the Worker into one SessionDO and into 20 sessions at once (heuristic observer, i.e. no
//    LLM wait), events/s and request latency, beside the bare /api/health route measured in the same run;
// 2. observer efficiency with a fake Messages API answering after 1 s while events arrive every 100 ms:
//    turns per 100 events, prompt characters per event, share of the prompt marked cacheable.
import { percentile, writeSection } from './retrieval/harness.mjs';
import { startFakeObserver, startPipelineServer } from './pipeline/server.mjs';
import { checkoutBaseline, freePort } from './baseline.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const log = (...a) =>
  console.log(
    new Date().toISOString().slice(11, 19),
    ...a.map((x) => (x && typeof x === 'object' && 'times' in x ? { ...x, times: undefined } : x)),
  );
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let seq = 0;
const RESPONSE = Array.from({ length: 40 }, (_, i) => `src/module-${i}.ts: ok (${i * 7} ms)`).join('\n');
function toolEvent(sessionId, extra = {}) {
  const n = ++seq;
  return {
    event_id: `bench-${process.pid}-${n}`,
    session_id: sessionId,
    project: 'github.com/bench/pipeline',
    cwd: '/home/bench/pipeline',
    occurred_at: Date.now(),
    tool_name: 'Bash',
    tool_input: { command: `npm test -- --shard ${n}`, description: 'Run one shard of the tests' },
    tool_response: { stdout: RESPONSE, stderr: '', exit_code: 0 },
    tool_use_id: `toolu_${n}`,
    ...extra,
  };
}

async function post(srv, path, body) {
  return fetch(`${srv.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * `total` requests from `concurrency` workers; request i is made by `make(i, worker)`; `expected` says which
 * statuses are right; `onResponse` sees each answer (e.g. to read Server-Timing).
 */
async function load(total, concurrency, make, expected = (status) => status < 300, onResponse = () => {}) {
  const times = [];
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t = performance.now();
        const res = await make(i, w);
        await res.text();
        onResponse(res);
        if (!expected(res.status)) failed++;
        times.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return summarize(times, seconds, failed);
}

function summarize(times, seconds, failed) {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    perSecond: times.length / seconds,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    failed,
    times,
    seconds,
  };
}

/** Adds one Server-Timing header's durations into `sums` (name → {total, n}). */
function addTimings(sums, header) {
  for (const part of (header ?? '').split(',')) {
    const name = part.split(';')[0]?.trim();
    const dur = /;dur=([\d.]+)/.exec(part)?.[1];
    if (!name || dur === undefined) continue;
    const s = (sums[name] ??= { total: 0, n: 0 });
    s.total += Number(dur);
    s.n++;
  }
}

/**
 * Today's main against this tree, both served at once and measured in alternating rounds so machine load hits
 * both alike: 8 clients on `GET /api/health`, then 8 clients sending observations into one session.
 */
async function ingestBeforeAfter() {
  const base = checkoutBaseline();
  log(`starting wrangler dev for ${base.commit} (before) and this tree (after)…`);
  const vars = { OBSERVER_PROVIDER: 'heuristic' };
  const builds = [
    {
      name: `before (${base.commit})`,
      srv: await startPipelineServer({ port: await freePort(), vars, root: base.root }),
    },
    { name: 'after (this tree)', srv: await startPipelineServer({ port: await freePort(), vars }) },
  ];
  try {
    const rounds = 4;
    const per = Math.ceil(EVENTS / rounds);
    for (const b of builds) {
      // The viewer's script as its page names it (the baseline may name it differently).
      const shell = await (await fetch(`${b.srv.url}/`)).text();
      b.script = `${b.srv.url}${/<script src="([^"]+)"/.exec(shell)?.[1] ?? '/viewer/app.js'}`;
      b.asset = { times: [], seconds: 0, failed: 0 };
      await load(50, 4, () => fetch(b.script));
      await load(50, 4, () => fetch(`${b.srv.url}/api/health`));
      await load(50, 4, (i) => post(b.srv, '/api/sessions/observations', toolEvent(`warm-${i % 4}`)));
      b.health = { times: [], seconds: 0, failed: 0 };
      b.ingest = { times: [], seconds: 0, failed: 0 };
      b.timings = {};
    }
    // What any ingest request must pay here: the token check, the per-token limiter of an admin route, and one
    // round trip to a SessionDO that does nothing.
    const floor = { times: [], seconds: 0, failed: 0 };
    const add = (acc, r) => {
      acc.times.push(...r.times);
      acc.seconds += r.seconds;
      acc.failed += r.failed;
    };
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 ? [...builds].reverse() : builds) {
        add(b.health, await load(per, 8, () => fetch(`${b.srv.url}/api/health`)));
        add(b.asset, await load(per, 8, () => fetch(b.script)));
        const onResponse = (res) => addTimings(b.timings, res.headers.get('server-timing'));
        add(
          b.ingest,
          await load(
            per,
            8,
            () => post(b.srv, '/api/sessions/observations', toolEvent('compare-session')),
            undefined,
            onResponse,
          ),
        );
        if (b === builds[1]) add(floor, await load(per, 8, () => post(b.srv, '/api/admin/bench/session-ping', {})));
      }
    }
    const f = summarize(floor.times, floor.seconds, floor.failed);
    const h1 = summarize(builds[1].health.times, builds[1].health.seconds, 0);
    const rows = builds.map((b) => {
      const h = summarize(b.health.times, b.health.seconds, b.health.failed);
      const i = summarize(b.ingest.times, b.ingest.seconds, b.ingest.failed);
      log(b.name, { health: h.perSecond, ingest: i.perSecond, hp50: h.p50, ip50: i.p50 });
      return `| ${b.name} | ${h.perSecond.toFixed(0)} | ${i.perSecond.toFixed(0)} | **${(i.perSecond / h.perSecond).toFixed(2)}×** | ${h.p50.toFixed(1)} | ${i.p50.toFixed(1)} | **${(i.p50 / h.p50).toFixed(2)}×** | ${i.p95.toFixed(1)} | ${h.failed + i.failed} |`;
    });
    const assetRows = builds.map((b) => {
      const a = summarize(b.asset.times, b.asset.seconds, b.asset.failed);
      const h = summarize(b.health.times, b.health.seconds, b.health.failed);
      return `| ${b.name} | ${a.perSecond.toFixed(0)} | ${a.p50.toFixed(1)} | ${a.p95.toFixed(1)} | ${(a.p50 / h.p50).toFixed(2)}× | ${a.failed} |`;
    });
    const t = builds[1].timings;
    const phases = Object.entries(t)
      .map(([name, s]) => `${name} ${(s.total / s.n).toFixed(1)} ms`)
      .join(', ');
    return [
      `### Ingest before/after (same run: ${per * rounds} requests per case and build, in ${rounds} alternating rounds, 8 clients, one session)`,
      '',
      '| build | `GET /api/health` req/s | `POST /api/sessions/observations` req/s | throughput ratio (goal ≥ 0.6×) | health p50 ms | ingest p50 ms | p50 ratio (goal ≤ 2×) | ingest p95 ms | failed |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
      `| after: floor (token check, limiter, one empty SessionDO round trip) | ${h1.perSecond.toFixed(0)} | ${f.perSecond.toFixed(0)} | ${(f.perSecond / h1.perSecond).toFixed(2)}× | ${h1.p50.toFixed(1)} | ${f.p50.toFixed(1)} | ${(f.p50 / h1.p50).toFixed(2)}× | ${f.p95.toFixed(1)} | ${f.failed} |`,
      '',
      `Where an ingest request's time goes after (means of the Server-Timing header, as the Worker saw it): ${phases || 'no Server-Timing header'}.`,
      '',
      `The viewer's script as the page names it, same rounds and clients (before: through the Worker; after: \`run_worker_first\` leaves /viewer/* to the assets server):`,
      '',
      "| build | viewer script req/s | p50 ms | p95 ms | p50 vs the same build's health p50 | failed |",
      '|---|---|---|---|---|---|',
      ...assetRows,
    ].join('\n');
  } finally {
    for (const b of builds) await b.srv.stop();
    base.cleanup();
  }
}

async function status(srv, sessionId) {
  const res = await fetch(`${srv.url}/api/sessions/${encodeURIComponent(sessionId)}/status`, {
    headers: { authorization: `Bearer ${srv.token}` },
  });
  return res.json();
}

/** Waits until every session has nothing pending or in flight; returns seconds waited. */
async function drain(srv, sessions, timeoutMs = 300_000) {
  const t0 = Date.now();
  for (;;) {
    const all = await Promise.all(sessions.map((s) => status(srv, s)));
    if (all.every((s) => s.pending === 0 && s.in_flight === 0))
      return { seconds: (Date.now() - t0) / 1000, statuses: all };
    if (Date.now() - t0 > timeoutMs) throw new Error(`sessions did not drain: ${JSON.stringify(all.slice(0, 3))}`);
    await sleep(200);
  }
}

const row = (name, r) =>
  `| ${name} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.failed} |`;

async function ingestThroughput() {
  log('starting wrangler dev (heuristic observer)…');
  const srv = await startPipelineServer({ port: await freePort(), vars: { OBSERVER_PROVIDER: 'heuristic' } });
  try {
    await load(50, 4, () => fetch(`${srv.url}/api/health`));
    await load(50, 4, (i) => post(srv, '/api/sessions/observations', toolEvent(`warm-${i % 4}`)));
    const bare = await load(EVENTS, 8, () => fetch(`${srv.url}/api/health`));
    log('bare', bare);
    // Where the time goes: token check + rate limit alone, then an event the gate turns away.
    const authed = await load(
      EVENTS,
      8,
      () => fetch(`${srv.url}/api/no-such-route`, { headers: { authorization: `Bearer ${srv.token}` } }),
      (s) => s === 404,
    );
    const gated = await load(EVENTS, 8, () =>
      post(srv, '/api/sessions/observations', toolEvent('gated', { tool_name: 'TodoWrite' })),
    );
    const one = await load(EVENTS, 8, () => post(srv, '/api/sessions/observations', toolEvent('one-session')));
    log('one session', one);
    const oneDrain = await drain(srv, ['one-session']);
    const sessions = Array.from({ length: 20 }, (_, i) => `many-${i}`);
    const many = await load(EVENTS, 20, (_i, w) => post(srv, '/api/sessions/observations', toolEvent(sessions[w])));
    log('20 sessions', many);
    const manyDrain = await drain(srv, sessions);
    const turns = manyDrain.statuses.reduce((n, s) => n + s.turns, 0);
    return [
      `### Ingest (${EVENTS} observation events per case, ~2 KB each, heuristic observer)`,
      '',
      '| case | requests/s | p50 ms | p95 ms | failed |',
      '|---|---|---|---|---|',
      row('bare Worker route `GET /api/health` (8 clients)', bare),
      row('token check + rate limit only (authenticated 404, 8 clients)', authed),
      row('event turned away by the gate (`TodoWrite`, 8 clients)', gated),
      row('one session (8 clients)', one),
      row('20 sessions (20 clients, one per session)', many),
      '',
      `Observed after the last request: one session drained in ${oneDrain.seconds.toFixed(1)} s (${oneDrain.statuses[0].turns} turns);`,
      `20 sessions drained in ${manyDrain.seconds.toFixed(1)} s (${turns} turns in all).`,
    ].join('\n');
  } finally {
    await srv.stop();
  }
}

function promptChars(body) {
  const text = (c) =>
    typeof c === 'string' ? c.length : Array.isArray(c) ? c.reduce((n, b) => n + (b.text?.length ?? 0), 0) : 0;
  const cached = (c) => Array.isArray(c) && c.some((b) => b.cache_control);
  const system = text(body.system);
  let total = system;
  let cacheable = cached(body.system) ? system : 0;
  let prefix = system;
  for (const m of body.messages ?? []) {
    total += text(m.content);
    prefix += text(m.content);
    if (cached(m.content)) cacheable = prefix;
  }
  return { total, cacheable };
}

async function observerEfficiency() {
  const fake = await startFakeObserver();
  log('starting wrangler dev (anthropic SDK → fake observer, 1 s per answer)…');
  const srv = await startPipelineServer({
    port: await freePort(),
    vars: { OBSERVER_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: fake.url },
  });
  try {
    const scenario = 'efficiency';
    await fake.script(scenario, [], 1000);
    await fake.script('default', [], 1000);
    const sid = 'efficiency-session';
    await post(srv, '/api/sessions/init', {
      event_id: 'eff-init',
      session_id: sid,
      project: 'github.com/bench/pipeline',
      cwd: '/w',
      occurred_at: Date.now(),
      prompt: 'Make the test suite pass',
    });
    const t0 = Date.now();
    const sends = [];
    for (let i = 0; i < 100; i++) {
      const due = t0 + i * 100;
      await sleep(Math.max(0, due - Date.now()));
      const extra = i === 0 ? { tool_input: { command: `SCENARIO:${scenario} npm test`, description: 'first' } } : {};
      sends.push(post(srv, '/api/sessions/observations', toolEvent(sid, extra)).then((r) => r.text()));
    }
    await Promise.all(sends);
    const drained = await drain(srv, [sid]);
    const requests = [...(await fake.requests(scenario)), ...(await fake.requests('default'))];
    let total = 0;
    let cacheable = 0;
    for (const r of requests) {
      const c = promptChars(r.body);
      total += c.total;
      cacheable += c.cacheable;
    }
    const st = drained.statuses[0];
    log('efficiency', { turns: st.turns, requests: requests.length, total, cacheable });
    return [
      '### Observer efficiency (fake Messages API answering after 1 s; one event every 100 ms; 100 events)',
      '',
      '| turns per 100 events | observer requests | prompt chars per event | share of prompt chars marked cacheable | observations stored | drained after last event |',
      '|---|---|---|---|---|---|',
      `| ${st.turns} | ${requests.length} | ${(total / 100).toFixed(0)} | ${((100 * cacheable) / Math.max(1, total)).toFixed(0)} % | ${st.observations_stored} | ${drained.seconds.toFixed(1)} s |`,
      '',
      'Prompt chars count the system prompt and every message sent in each request (the whole conversation is',
      'resent each turn); "cacheable" is everything up to the last `cache_control` breakpoint of each request.',
    ].join('\n');
  } finally {
    await srv.stop();
    await Promise.race([fake.close(), sleep(2000)]);
  }
}

const parts = [await ingestBeforeAfter(), await ingestThroughput(), await observerEfficiency()];
writeSection(
  'pipeline',
  [
    '## Pipeline (`npm run bench` → bench/pipeline.bench.mjs)',
    '',
    ...parts.flatMap((p) => [p, '']),
    `Run at ${new Date().toISOString()} on this 2-core box, wrangler dev --local.`,
  ].join('\n'),
);
log('wrote the pipeline section of BENCHMARKS.md');
process.exit(0);
