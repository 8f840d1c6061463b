// Replays public Claude Code session transcripts (.jsonl, as Claude Code writes them under ~/.claude/projects)
// through a snapshot `wrangler dev`: each real user prompt becomes a prompt event, each tool call with its result
// an observation event, through the same routes the hooks client uses. Then it runs consolidation as an admin
// would and reports how many records were stored, how many consolidation merged (with the merged titles, for
// reading by hand) and how many corrections the observer proposed. The data is read from the paths given; it is
// never committed. The observer is whatever OBSERVER_PROVIDER names (default: heuristic, no model).
//   node bench/public-replay.bench.mjs <transcript.jsonl>…
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, mintDevToken, startDevServer } from '../scripts/dev-server.mjs';

const SECRET = 'public-replay-secret';
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

/** A transcript's prompts and tool calls, in order. */
function parse(file) {
  const events = [];
  const results = new Map();
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .filter(Boolean);
  for (const o of lines) {
    const content = o.message?.content;
    if (o.type === 'user' && Array.isArray(content))
      for (const b of content) if (b?.type === 'tool_result') results.set(b.tool_use_id, b);
  }
  for (const o of lines) {
    const content = o.message?.content;
    const at = Date.parse(o.timestamp ?? '') || Date.now();
    if (o.type === 'user' && !o.isMeta && !o.isSidechain) {
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content
                .filter((b) => b?.type === 'text')
                .map((b) => b.text)
                .join('\n')
            : '';
      if (text.trim() && !text.startsWith('<command-') && !text.startsWith('<local-command'))
        events.push({ kind: 'init', at, prompt: text, sid: o.sessionId, cwd: o.cwd });
    }
    if (o.type === 'assistant' && Array.isArray(content) && !o.isSidechain) {
      for (const b of content) {
        if (b?.type !== 'tool_use') continue;
        const r = results.get(b.id);
        const out = r ? (typeof r.content === 'string' ? r.content : JSON.stringify(r.content)) : '';
        events.push({
          kind: 'tool',
          at,
          sid: o.sessionId,
          cwd: o.cwd,
          tool_name: b.name,
          tool_input: b.input,
          tool_response: { output: out.slice(0, 20_000), is_error: r?.is_error === true },
          tool_use_id: b.id,
        });
      }
    }
  }
  return events;
}

async function api(url, token, method, route, body) {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: node bench/public-replay.bench.mjs <transcript.jsonl>…');
  process.exit(2);
}
const persist = mkdtempSync(path.join(tmpdir(), 'cairn-public-replay-'));
const provider = process.env.OBSERVER_PROVIDER ?? 'heuristic';
const server = await startDevServer({
  port: await freePort(),
  persistTo: persist,
  vars: { CAIRN_ADMIN_SECRET: SECRET, OBSERVER_PROVIDER: provider, RATE_LIMIT_INGEST_PER_MIN: '100000' },
});
try {
  const token = await mintDevToken(server.url, SECRET, { team: 'replay', user: 'replayer', device: 'bench' });
  const projects = new Set();
  let sent = 0;
  for (const file of files) {
    const events = parse(file);
    log(
      `${path.basename(file)}: ${events.filter((e) => e.kind === 'init').length} prompts, ${events.filter((e) => e.kind === 'tool').length} tool calls`,
    );
    for (const [i, e] of events.entries()) {
      const project = `github.com/public/${path.basename(e.cwd ?? 'unknown')}`;
      projects.add(project);
      const common = {
        session_id: e.sid,
        project,
        cwd: e.cwd,
        occurred_at: e.at + i,
        event_id: `replay-${e.sid}-${i}`,
      };
      if (e.kind === 'init')
        await api(server.url, token, 'POST', '/api/sessions/init', { ...common, prompt: e.prompt.slice(0, 20_000) });
      else
        await api(server.url, token, 'POST', '/api/sessions/observations', {
          ...common,
          tool_name: e.tool_name,
          tool_input: e.tool_input,
          tool_response: e.tool_response,
          tool_use_id: e.tool_use_id,
        });
      sent++;
    }
  }
  log(`sent ${sent} events; waiting for the observer`);
  // Stored once the project's count stops moving for 10 s.
  let last = -1;
  let still = 0;
  for (;;) {
    const { projects: list } = await api(server.url, token, 'GET', '/api/admin/projects');
    const n = list.reduce((s, p) => s + p.observations, 0);
    still = n === last ? still + 1 : 0;
    last = n;
    if (still >= 5) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const { projects: list } = await api(server.url, token, 'GET', '/api/admin/projects');
  const review = await api(server.url, token, 'GET', '/api/admin/review');
  const before = {
    observations: last,
    superseded: review.superseded.length,
    flagged: review.flagged.length,
    held: review.held.length,
  };
  log('stored', before);
  for (const p of list) {
    const { job } = await api(server.url, token, 'POST', '/api/admin/jobs', {
      kind: 'consolidate-project',
      params: { projectId: p.id },
    });
    for (;;) {
      const { job: j } = await api(server.url, token, 'GET', `/api/admin/jobs/${job.id}`);
      if (j.status === 'done' || j.status === 'failed') {
        log(p.key, j.status, JSON.stringify(j.result ?? j.error ?? null));
        break;
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  const { merges } = await api(server.url, token, 'GET', '/api/admin/merges');
  const merged = merges.reduce((s, m) => s + m.sources.length, 0);
  console.log(
    JSON.stringify(
      { observer: provider, files: files.map((f) => path.basename(f)), ...before, merges: merges.length, merged },
      null,
      2,
    ),
  );
  // A sample to read by hand: the newest records of each project, and what was held back.
  const byId = new Map();
  for (const p of list) {
    const feed = await api(server.url, token, 'GET', `/api/viewer/feed?project=${encodeURIComponent(p.key)}&limit=100`);
    const obs = feed.items.filter((x) => x.kind === 'observation');
    for (const x of obs) byId.set(x.id, x);
    const types = {};
    for (const x of obs) types[x.type] = (types[x.type] ?? 0) + 1;
    console.log(`${p.key}: ${obs.length} observations ${JSON.stringify(types)}`);
    for (const x of obs.filter((_, i) => i % 6 === 0)) console.log(`  #${x.id} [${x.type}] ${x.title}`);
  }
  for (const h of review.held)
    console.log(`held ${h.kind} #${h.id} (${h.held.join(',')}): ${String(h.title).slice(0, 120)}`);
  for (const m of merges.slice(0, 10)) {
    const titles = [];
    for (const id of [m.id, ...m.sources])
      titles.push(
        `#${id} [${byId.get(id)?.type ?? '?'}] ${byId.get(id)?.title ?? '(not in the feed: merged sources leave it)'}`,
      );
    console.log(`merge into #${m.id}:\n  ${titles.join('\n  ')}`);
  }
} finally {
  await server.stop();
  rmSync(persist, { recursive: true, force: true });
}
