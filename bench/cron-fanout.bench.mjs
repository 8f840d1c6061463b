// The daily cron at 1,000 teams, per invocation (issue 35): runs test/worker/scale/cron-fanout.slow.test.ts (1,001
// teams seeded in a few statements; the scheduled invocation, every dispatcher step and a team's own job, each under
// the meter, Durable Object calls counted where they leave, under the Free and the Paid plan) and writes the
// "cron-fanout" section of BENCHMARKS.md from its CRON-FANOUT line. Counts, not times: they do not depend on the
// machine. The "before" row is the same seeding measured once on d420005, whose cron did all of it in the one
// scheduled invocation (test file kept in that commit's terms, counts in BEFORE below).
import { spawnSync } from 'node:child_process';
import { writeSection } from './retrieval/harness.mjs';
import { ROOT } from '../scripts/dev-server.mjs';

/** d420005, same seeding, one scheduled invocation: [teams, D1 statements, Durable Object calls]. */
const BEFORE = [
  [3, 20, 9],
  [30, 71, 69],
  [1001, 1986, 2297],
];

const r = spawnSync('npx', ['vitest', 'run', 'test/worker/scale/cron-fanout.slow.test.ts'], {
  cwd: ROOT,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
const line = `${r.stdout}\n${r.stderr}`.split('\n').find((l) => l.includes('CRON-FANOUT '));
if (r.status !== 0 || !line) {
  console.error(r.stdout.slice(-4000), r.stderr.slice(-4000));
  process.exit(1);
}
const m = JSON.parse(line.slice(line.indexOf('CRON-FANOUT ') + 'CRON-FANOUT '.length));
console.log(JSON.stringify(m, null, 2));

const row = (plan, what, x) =>
  `| ${plan} | ${what} | ${x.steps ?? 1} | ${x.statements} | ${x.subrequests} | ${x.both ?? x.statements + x.subrequests} |`;
const limit = { free: 50, paid: 1000 };
const lines = [
  `## The daily cron at ${m.teams.toLocaleString('en-US')} teams, per invocation (\`npm run bench cron-fanout\` → bench/cron-fanout.bench.mjs)`,
  '',
  `${m.teams.toLocaleString('en-US')} teams (an owner and a project with an observation today each, retention_days on every fourth; one team with 45 active projects), seeded in a few statements. Each invocation's D1 statements (the meter) and other subrequests (Durable Object and R2 calls, counted where they leave), the most of any one invocation of its kind; Cloudflare counts both against one limit per invocation: 50 on Free, 1,000 on Paid. Job lanes record the starts and run nothing, so only what each invocation sends is measured.`,
  '',
  '**Before** (d420005, the same seeding): everything in the one scheduled invocation.',
  '',
  '| teams | D1 statements | Durable Object calls | together | Free (50) | Paid (1,000) |',
  '|---|---|---|---|---|---|',
  ...BEFORE.map(
    ([t, s, c]) =>
      `| ${t.toLocaleString('en-US')} | ${s.toLocaleString('en-US')} | ${c.toLocaleString('en-US')} | ${(s + c).toLocaleString('en-US')} | ${s + c > 50 ? 'over' : 'within'} | ${s + c > 1000 ? 'over' : 'within'} |`,
  ),
  '',
  `**After**: the scheduled invocation starts the dispatcher; each dispatcher step (a page of 25 teams) and each step of a team's own job is an invocation of its own.`,
  '',
  '| plan | invocation | invocations | statements (most) | subrequests (most) | together (most) |',
  '|---|---|---|---|---|---|',
];
for (const plan of ['free', 'paid']) {
  const p = m[plan];
  lines.push(
    row(plan, 'scheduled (the cron)', p.scheduled),
    row(plan, 'dispatcher step', p.dispatcher),
    row(plan, "a team's job, 1 active project", p.team),
    row(plan, "a team's job, 45 active projects", p.team45),
  );
}
// Before grew by a fixed amount per team: where its line crossed each plan's limit.
const [[t1, s1, c1], [t2, s2, c2]] = [BEFORE[1], BEFORE[2]];
const perTeam = (s2 + c2 - (s1 + c1)) / (t2 - t1);
const crosses = (lim) => Math.floor((lim - (s1 + c1 - perTeam * t1)) / perTeam) + 1;
lines.push(
  '',
  `Most in any one invocation: ${m.free.most} on Free (limit ${limit.free}), ${m.paid.most} on Paid (limit ${limit.paid.toLocaleString('en-US')}); at 10× the teams the same, in 10× the dispatcher steps (the per-step counts do not move with the number of teams: test/worker/maintenance/daily-fanout.test.ts compares n and n + 1 pages of teams). Before, one invocation sent ${(s2 + c2).toLocaleString('en-US')} at ${t2.toLocaleString('en-US')} teams, ${perTeam.toFixed(1)} more per team: past Free's limit from ${crosses(limit.free)} teams with an active project each, past Paid's from ${crosses(limit.paid)}.`,
);
writeSection('cron-fanout', lines.join('\n'));
