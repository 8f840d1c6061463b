// How long a team move refuses the team's writes (issue 35), at 100,000 observations with 100 ms injected before
// every D1 round trip (CAIRN_BENCH_D1_LATENCY_MS, src/db/latency.ts: the distance between a Worker and its
// database in production, 80–150 ms across regions; locally D1 answers in well under a millisecond). Per variant, a
// snapshot wrangler dev: team "mover" is seeded with ROWS observations over 20 projects without latency, the server
// starts again on the same database with the latency, and a writer of the team sends a tool event every 250 ms (an
// observer turn each, stored through the pipeline) and a `remember` every 10th time while the operator's move to
// DB_1 runs as its job. Measured: the writer's requests answered 503 team_moving (first to last), the job's phases
// as the operator's job route shows them, and whether every write the team made meanwhile is on DB_1 afterwards
// (its notes by text). "after" is this checkout (copy first, writes closed for the tail); "before" is the commit
// before copy-first (BENCH_MOVE_BEFORE_REF, default the parent of the commit that built it), given this checkout's
// latency seam (src/db/latency.ts with its hooks in src/db/shards.ts and src/config.ts) so it is measured the same.
// BENCH_MOVE_ROWS, BENCH_MOVE_LATENCY_MS and BENCH_MOVE_VARIANTS=after,before change the run; each variant's
// results also go to $TMPDIR/move-closed-<variant>.json. Writes the "move-closed" section of BENCHMARKS.md.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { checkoutBaseline } from './baseline.mjs';
import { writeSection } from './retrieval/harness.mjs';
import { observationsFor } from './retrieval/synthetic.mjs';
import { ROOT, freePort, mintDevToken, startDevServer } from '../scripts/dev-server.mjs';

const ROWS = Number(process.env.BENCH_MOVE_ROWS ?? 100_000);
const LATENCY = Number(process.env.BENCH_MOVE_LATENCY_MS ?? 100);
const VARIANTS = (process.env.BENCH_MOVE_VARIANTS ?? 'after,before').split(',');
const PROJECTS = 20;
const WRITE_EVERY_MS = 250;
const END = Date.UTC(2026, 10, 1);
/** The files that carry the latency seam into the "before" tree. */
const SEAM = ['src/db/latency.ts', 'src/db/shards.ts', 'src/config.ts'];
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

function beforeRef() {
  if (process.env.BENCH_MOVE_BEFORE_REF) return process.env.BENCH_MOVE_BEFORE_REF;
  // The commit that built copy-first names it in its subject; its parent is the move that closed writes throughout.
  const built = execFileSync('git', ['log', '--format=%h', '-1', '--grep=copies while the team writes'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).trim();
  return `${built}^`;
}

async function api(url, token, method, p, body) {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined
        ? {}
        : { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function seed(url, token) {
  const per = Math.ceil(ROWS / PROJECTS);
  for (let p = 0; p < PROJECTS; p++) {
    const all = observationsFor(p, 0, per, END).map(({ symbol, ...o }) => o);
    for (let i = 0; i < all.length; i += 1000) {
      const r = await api(url, token, 'POST', '/api/admin/bench/seed', {
        project: `github.com/mover/project-${p}`,
        session: `mover-${p}-${i}`,
        observations: all.slice(i, i + 1000),
      });
      if (r.status >= 300) throw new Error(`seed: ${r.status} ${r.text.slice(0, 200)}`);
    }
    log(`seeded project ${p + 1}/${PROJECTS}`);
  }
}

/** The team writing while it moves: a tool event every WRITE_EVERY_MS, a note every 10th; every answer kept. */
function writer(url, token, t0) {
  const sid = `writer-${process.pid}`;
  const sent = [];
  let stop = false;
  const run = (async () => {
    const init = await api(url, token, 'POST', '/api/sessions/init', {
      session_id: sid,
      project: 'github.com/mover/project-0',
      cwd: '/home/m/p',
      occurred_at: Date.now(),
      event_id: `init-${sid}`,
      prompt: 'Keep the build green while the team moves',
    });
    if (init.status >= 300) throw new Error(`init: ${init.status} ${init.text}`);
    for (let i = 0; !stop; i++) {
      const at = performance.now() - t0;
      const note = i % 10 === 9;
      const r = note
        ? await api(url, token, 'POST', '/mcp', {
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: {
              name: 'remember',
              arguments: {
                project: 'github.com/mover/project-0',
                text: `Moving note mvnote${i}x: the cache key needs the locale.`,
              },
            },
          })
        : await api(url, token, 'POST', '/api/sessions/observations', {
            session_id: sid,
            project: 'github.com/mover/project-0',
            cwd: '/home/m/p',
            occurred_at: Date.now(),
            event_id: `ev-${sid}-${i}`,
            tool_name: 'Bash',
            tool_input: { command: `npm test -- shard ${i}` },
            tool_response: { stdout: `ok ${i}`, exit_code: 0 },
          });
      const refused = r.status === 503 || (note && r.text.includes('team_moving'));
      const stored = note ? /#\d+/.test(r.text) : r.status === 202;
      sent.push({ i, note, at, end: performance.now() - t0, status: r.status, refused, stored });
      await new Promise((res) => setTimeout(res, WRITE_EVERY_MS));
    }
  })();
  return {
    sent,
    stop: async () => {
      stop = true;
      await run;
    },
  };
}

async function variant(name, root) {
  const secret = `move-${Math.random().toString(36).slice(2)}`;
  const state = mkdtempSync(path.join(tmpdir(), 'cairn-move-closed-'));
  const base = { snapshot: true, root, persistTo: state, timeoutMs: 600_000 };
  const vars = {
    CAIRN_ADMIN_SECRET: secret,
    RATE_LIMIT_READ_PER_MIN: '10000000',
    RATE_LIMIT_INGEST_PER_MIN: '10000000',
  };
  try {
    let server = await startDevServer({ ...base, port: await freePort(), vars });
    const token = await mintDevToken(server.url, secret, { team: 'mover', user: 'owner', device: 'box' });
    await seed(server.url, token);
    await server.stop();
    log(`${name}: ${ROWS} observations seeded; serving them again with ${LATENCY} ms per D1 round trip`);
    server = await startDevServer({
      ...base,
      port: await freePort(),
      vars: { ...vars, CAIRN_BENCH_D1_LATENCY_MS: String(LATENCY) },
    });
    try {
      const { url } = server;
      const t0 = performance.now();
      const w = writer(url, token, t0);
      await new Promise((res) => setTimeout(res, 5_000));
      const started = await api(url, secret, 'POST', '/api/admin/teams/mover/move', { shard: 'DB_1' });
      if (started.status !== 202) throw new Error(`move: ${started.status} ${started.text}`);
      const moveAt = performance.now() - t0;
      const jobId = JSON.parse(started.text).job.id;
      const phases = [];
      let job = null;
      // Until the gate is open again and the map names DB_1: after copy-first its `vectors` phase, before it `drop`.
      for (;;) {
        const r = await api(url, secret, 'GET', `/api/admin/teams/mover/jobs/${jobId}`);
        job = JSON.parse(r.text).job;
        const phase = job.progress?.phase ?? job.status;
        if (phases.at(-1)?.phase !== phase) {
          phases.push({ phase, at: performance.now() - t0 });
          log(name, 'phase', phase, `${((performance.now() - t0 - moveAt) / 1000).toFixed(1)} s`);
        }
        if (['vectors', 'drop', 'embed'].includes(phase) && phases.some((p) => p.phase === 'release')) break;
        if (['done', 'failed', 'cancelled'].includes(job.status)) break;
        await new Promise((res) => setTimeout(res, 1_000));
      }
      await new Promise((res) => setTimeout(res, 3_000));
      await w.stop();
      const openAt = phases.find((p) => p.phase === 'vectors' || p.phase === 'drop')?.at ?? null;
      const refused = w.sent.filter((s) => s.refused);
      const during = w.sent.filter((s) => s.at >= moveAt && (openAt === null || s.at <= openAt));
      // The notes the team stored while it moved are on the database it moved to: up to 20 of them, spread over the
      // move, each searched for by its own word.
      const notes = during.filter((s) => s.note && s.stored).map((s) => s.i);
      const sample = notes.filter((_, k) => k % Math.max(1, Math.ceil(notes.length / 20)) === 0);
      let found = 0;
      for (const i of sample) {
        const r = await api(url, token, 'GET', `/api/search?q=mvnote${i}x`);
        if (r.text.includes(`mvnote${i}x`)) found++;
      }
      return {
        name,
        moveS: ((openAt ?? performance.now() - t0) - moveAt) / 1000,
        refusedS: refused.length ? (refused.at(-1).end - refused[0].at) / 1000 : 0,
        refused: refused.length,
        writes: during.length,
        stored: during.filter((s) => s.stored).length,
        other: w.sent.filter((s) => !s.refused && !s.stored).map((s) => s.status),
        notes: sample.length,
        found,
        phases: phases.map((p) => `${p.phase} ${((p.at - moveAt) / 1000).toFixed(0)} s`).join(', '),
      };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

// BENCH_MOVE_RESULTS=a.json,b.json: write the section from earlier runs' results (variants run in separate
// processes, side by side) instead of running anything.
const results = process.env.BENCH_MOVE_RESULTS
  ? process.env.BENCH_MOVE_RESULTS.split(',').flatMap((f) => JSON.parse(readFileSync(f, 'utf8')))
  : [];
for (const v of process.env.BENCH_MOVE_RESULTS ? [] : VARIANTS) {
  if (v === 'after') results.push(await variant('after', undefined));
  else if (v === 'before') {
    const ref = beforeRef();
    const baseline = checkoutBaseline(ref);
    try {
      for (const f of SEAM) copyFileSync(path.join(ROOT, f), path.join(baseline.root, f));
      results.push({ ...(await variant('before', baseline.root)), commit: baseline.commit });
    } finally {
      baseline.cleanup();
    }
  }
  log(results.at(-1));
  writeFileSync(path.join(tmpdir(), `move-closed-${v}.json`), JSON.stringify([results.at(-1)]));
}

const row = (r) =>
  `| ${r.name}${r.commit ? ` (${r.commit})` : ''} | ${r.moveS.toFixed(0)} s | ${r.refusedS.toFixed(1)} s | ${r.refused} of ${r.writes} | ${r.stored} | ${r.found} of ${r.notes} |`;
writeSection(
  'move-closed',
  `
## Writes closed during a team move (\`npm run bench move-closed\` → bench/move-closed.bench.mjs)

${ROWS.toLocaleString('en')} observations in 20 projects, moved DB → DB_1 by the operator's job on a snapshot wrangler dev with
${LATENCY} ms injected before every D1 round trip (\`CAIRN_BENCH_D1_LATENCY_MS\`, src/db/latency.ts; production's distance between a Worker and
its database is 80–150 ms, local D1 answers in well under 1 ms). The team writes throughout: a tool event every ${WRITE_EVERY_MS} ms (an observer turn
each) and a \`remember\` every tenth. "refused" is from the first answer 503 \`team_moving\` to the end of the last; "move" from the request to the
gate open again with the map on DB_1. Load average ${loadavg()[0].toFixed(1)} at the end.

| variant | move | writes refused | writes refused / sent during the move | stored during the move | notes of the move found on DB_1 (sampled) |
|---|---|---|---|---|---|
${results.map(row).join('\n')}

Phases (seconds into the move): ${results.map((r) => `**${r.name}**: ${r.phases}`).join('; ')}.
Other answers: ${results.map((r) => `${r.name} ${r.other.length ? r.other.join(', ') : 'none'}`).join('; ')}.
`,
);
process.exit(results.every((r) => r.found === r.notes) ? 0 : 1);
