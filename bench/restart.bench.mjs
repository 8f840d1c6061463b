// Restart drill, before/after in the same run: a session's first turn is in flight at the observer when
// `wrangler dev` and everything it started get SIGKILL; the service starts again on the same state, and we time
// how long after the restart (the server answering again) every event and the summary are in D1. Two forms:
// "quiet" sends nothing after the restart (only the session object's alarm can bring the work back), "busy"
// sends two more tool calls and the summary after it (the drill of issue 22). The fake observer answers at once
// after the restart and rewords every telling, so a turn stored twice would show as extra rows. Both builds are
// bundled snapshots (`startDevServer({ snapshot: true })`) on their own fresh state. Writes the "restarts"
// section of BENCHMARKS.md. The baseline (BENCH_RESTART_BASELINE, default the commit before instance-bound
// leases) waits out its 10-minute lease: the run takes about 25 minutes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mintDevToken, ROOT } from '../scripts/dev-server.mjs';
import { checkoutBaseline, freePort } from './baseline.mjs';
import { inD1, killTree, post, startDrillServer } from './pipeline/restart-drill.mjs';
import { startFakeObserver } from './pipeline/server.mjs';
import { writeSection } from './retrieval/harness.mjs';

const BASELINE = process.env.BENCH_RESTART_BASELINE ?? 'a3fc478^';
const CAP_MS = Number(process.env.BENCH_RESTART_CAP_MS ?? 15 * 60_000);
const ADMIN = 'restart-bench-secret';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One drill on `root` (undefined: this tree); answers ms from the restart to everything stored, or null past the cap. */
async function drill(name, root, form, fake) {
  const persist = mkdtempSync(path.join(tmpdir(), 'cairn-restart-bench-'));
  const port = await freePort();
  let srv = await startDrillServer(root, port, persist, fake.url, ADMIN);
  try {
    const token = await mintDevToken(srv.url, ADMIN, { team: `restart-${form}`, user: 'dev', device: 'laptop' });
    const sid = `restart-${form}-${Date.now()}`;
    const scen = `rs${form}${Date.now().toString(36)}`;
    await fetch(`${fake.url}/__scenario/${scen}`, {
      method: 'POST',
      body: JSON.stringify({ hold: true, reword: true }),
    });
    const base = { session_id: sid, project: 'github.com/bench/restart', cwd: '/home/bench/restart' };
    const t = Date.now();
    await post(srv.url, token, '/api/sessions/init', {
      ...base,
      event_id: `${sid}-init`,
      occurred_at: t,
      prompt: 'Speed up the importer',
    });
    const tool = (i) => ({
      ...base,
      event_id: `${sid}-tool-${i}`,
      occurred_at: t + i + 1,
      tool_name: 'Bash',
      tool_use_id: `${sid}-tu-${i}`,
      tool_input: { command: i === 0 ? `npm run step-${i} # SCENARIO:${scen}` : `npm run step-${i}` },
      tool_response: { stdout: `step ${i} done`, exit_code: 0 },
    });
    const summary = {
      ...base,
      event_id: `${sid}-stop`,
      occurred_at: t + 100,
      last_assistant_message: 'The importer is faster now.',
    };
    for (let i = 0; i < 4; i++) await post(srv.url, token, '/api/sessions/observations', tool(i));
    if (form === 'quiet') await post(srv.url, token, '/api/sessions/summarize', summary);
    await fetch(`${fake.url}/__scenario/${scen}?arrived=1`);
    log(`${name} ${form}: observer call in flight; SIGKILL to the process group`);
    await killTree(srv);
    await fetch(`${fake.url}/__scenario/${scen}/release`, { method: 'POST' });
    await fetch(`${fake.url}/__scenario/${scen}`, { method: 'POST', body: JSON.stringify({ reword: true }) });
    srv = await startDrillServer(root, port, persist, fake.url, ADMIN);
    const restarted = Date.now();
    const expected = form === 'quiet' ? 4 : 6;
    if (form === 'busy') {
      for (let i = 4; i < 6; i++) await post(srv.url, token, '/api/sessions/observations', tool(i));
      await post(srv.url, token, '/api/sessions/summarize', summary);
    }
    log(`${name} ${form}: restarted; waiting for ${expected} observations and the summary in D1`);
    for (;;) {
      const d = await inD1(srv.url, token, sid);
      if (d.observations >= expected && d.summaries >= 1) {
        const ms = Date.now() - restarted;
        const calls = (await fake.requests(scen)).length;
        log(
          `${name} ${form}: all stored ${ms} ms after the restart (${d.observations} observations, ${d.summaries} summary, ${calls} observer calls)`,
        );
        return { ms, observations: d.observations, summaries: d.summaries, calls, expected };
      }
      if (Date.now() - restarted > CAP_MS)
        return {
          ms: null,
          observations: d.observations,
          summaries: d.summaries,
          calls: (await fake.requests(scen)).length,
          expected,
        };
      await sleep(500);
    }
  } finally {
    await srv.stop().catch(() => undefined);
    rmSync(persist, { recursive: true, force: true });
  }
}

const seconds = (ms) => (ms === null ? `> ${CAP_MS / 60_000} min (not stored)` : `${(ms / 1000).toFixed(1)} s`);

const fake = await startFakeObserver();
const base = checkoutBaseline(BASELINE);
try {
  const rows = [];
  for (const form of ['quiet', 'busy']) {
    for (const [name, root] of [
      [`before (${base.commit})`, base.root],
      ['after (this tree)', undefined],
    ]) {
      const r = await drill(name, root, form, fake);
      rows.push(
        `| ${form} | ${name} | ${seconds(r.ms)} | ${r.observations} of ${r.expected} | ${r.summaries} | ${r.calls} |`,
      );
    }
  }
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  writeSection(
    'restarts',
    [
      '## Restart drill, before/after (`npm run bench restart` → bench/restart.bench.mjs)',
      '',
      "A session's first turn (4 tool calls) is in flight at the fake observer when `wrangler dev`'s whole process group",
      'gets SIGKILL; the service starts again on the same state (a bundled snapshot of each build, its own fresh',
      'database). Time from the restart (the server answering again) until every observation and the summary are in',
      'D1, read through a route that never wakes the session object. *quiet*: the summary was sent before the kill and',
      "nothing after it, so only the object's alarm can bring the work back; *busy*: two more tool calls and the summary",
      'arrive after the restart (the drill of issue 22). The observer rewords every telling: rows above the expected',
      `count would be a turn stored twice. Same run, same machine; after = ${commit}.`,
      '',
      '| form | build | restart → all stored | observations | summaries | observer calls |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      `Run at ${new Date().toISOString()} (Node ${process.version}).`,
    ].join('\n'),
  );
} finally {
  base.cleanup();
  await Promise.race([fake.close(), sleep(2000)]);
}
