// Hostile-input benchmark (issue 14): each row's input (or worse) sent to a snapshot wrangler dev, timed, while
// another team's caller keeps asking for its projects. Checks, per row: the answer is the expected 2xx/4xx,
// it came within 2 s, and the other caller's slowest answer meanwhile stayed within 2 s. Exits 1 if not.
// Writes the "hostile" section of BENCHMARKS.md.
import { createServer } from 'node:net';
import { writeSection } from './retrieval/harness.mjs';
import { mintDevToken, startDevServer } from '../scripts/dev-server.mjs';

const BOUND_MS = 2_000;
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

let n = 0;
const id = (p) => `${p}-${process.pid}-${++n}`;

function send(url, token, method, path, { body, raw, headers = {} } = {}) {
  const init = { method, headers: { ...headers } };
  if (token) init.headers.authorization = `Bearer ${token}`;
  if (raw !== undefined || body !== undefined) {
    init.headers['content-type'] ??= 'application/json';
    init.body = raw ?? JSON.stringify(body);
  }
  return fetch(`${url}${path}`, init);
}

/** Runs `hostile` while another caller polls; answers the hostile status and time and the poller's worst time. */
async function underLoad(url, bystander, hostile) {
  let done = false;
  let worst = 0;
  let polls = 0;
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await send(url, bystander, 'GET', '/api/projects');
      await res.arrayBuffer();
      worst = Math.max(worst, performance.now() - t0);
      polls++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const t0 = performance.now();
  // A case may answer { response, ms } when it sends several requests and its bound is per request.
  const answer = await hostile();
  const res = answer instanceof Response ? answer : answer.response;
  const text = await res.text();
  const ms = answer instanceof Response ? performance.now() - t0 : answer.ms;
  done = true;
  await poller;
  return { status: res.status, code: /"code":"([a-z_]+)"/.exec(text)?.[1] ?? '', ms, worst, polls };
}

const event = (extra) => ({
  event_id: id('ev'),
  session_id: id('s'),
  project: 'github.com/bench/hostile',
  cwd: '/home/b/h',
  occurred_at: Date.now(),
  ...extra,
});

async function main() {
  const port = await freePort();
  const secret = `hostile-${Math.random().toString(36).slice(2)}`;
  log('starting wrangler dev on port', port);
  const server = await startDevServer({
    port,
    snapshot: true,
    timeoutMs: 120_000,
    vars: { CAIRN_ADMIN_SECRET: secret },
  });
  const rows = [];
  try {
    const { url } = server;
    const token = await mintDevToken(url, secret, { team: 'hostile', user: 'owner', device: 'box' });
    const bystander = await mintDevToken(url, secret, { team: 'bystanders', user: 'carol', device: 'carol-box' });
    const mcpHeaders = { accept: 'application/json, text/event-stream' };
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const privateBody = `<private>${'x'.repeat(900_000)}</private>`;
    await send(url, token, 'PATCH', '/api/admin/settings', {
      body: { excluded_projects: ['**a**a**a**b', `/x/${'*a'.repeat(240)}`] },
    }).then((r) => r.arrayBuffer());
    // What the outside review measured before these changes (issue 14's table), per row.
    const BEFORE = {
      1: '202 after 12 s (prompt 20–22 s); service stalled',
      2: 'no answer for over a minute',
      3: 'all served past the limit',
      4: '503 (stack overflow)',
      5: '500',
      6: '500',
      7: 'stream never closes',
      10: '409 vs 200 by privacy',
      11: 'accepted',
      13: '50 audit rows',
    };
    const cases = [
      [
        '1',
        '900 KB <private> tool response',
        [202],
        () =>
          send(url, token, 'POST', '/api/sessions/observations', {
            body: event({ tool_name: 'Bash', tool_response: privateBody }),
          }),
      ],
      [
        '1',
        '900 KB <private> prompt',
        [202],
        () => send(url, token, 'POST', '/api/sessions/init', { body: event({ prompt: privateBody }) }),
      ],
      [
        '1',
        '100,000 unclosed <private> tags',
        [202],
        () =>
          send(url, token, 'POST', '/api/sessions/observations', {
            body: event({ tool_name: 'Bash', tool_response: '<private>'.repeat(100_000) }),
          }),
      ],
      [
        '2',
        'glob **a**a**a**b, 4,000-char cwd',
        [202],
        () =>
          send(url, token, 'POST', '/api/sessions/init', {
            body: event({ prompt: 'hi', cwd: `/${'a'.repeat(3_999)}` }),
          }),
      ],
      [
        '3',
        '100 tools/call in one /mcp batch',
        [400, 429],
        () =>
          send(url, token, 'POST', '/mcp', {
            headers: mcpHeaders,
            body: Array.from({ length: 100 }, (_, i) => ({
              jsonrpc: '2.0',
              id: i,
              method: 'tools/call',
              params: { name: 'search', arguments: { query: `q${i}` } },
            })),
          }),
      ],
      [
        '3',
        '10 tools/call in one /mcp batch (the most allowed)',
        [200],
        () =>
          send(url, token, 'POST', '/mcp', {
            headers: mcpHeaders,
            body: Array.from({ length: 10 }, (_, i) => ({
              jsonrpc: '2.0',
              id: i,
              method: 'tools/call',
              params: { name: 'search', arguments: { query: `q${i}` } },
            })),
          }),
      ],
      [
        '4',
        'tool_input 50,000 arrays deep',
        [400],
        () =>
          send(url, token, 'POST', '/api/sessions/observations', {
            raw: JSON.stringify(event({ tool_name: 'Bash' })).replace(/}$/, `,"tool_input":${deep}}`),
          }),
      ],
      [
        '4',
        'batch holding one 50,000-deep event',
        [400],
        () =>
          send(url, token, 'POST', '/api/events/batch', {
            raw: `{"events":[${JSON.stringify({ kind: 'end', ...event({}) })},${JSON.stringify({ kind: 'observation', ...event({ tool_name: 'x' }) }).replace(/}$/, `,"tool_input":${deep}}`)}]}`,
          }),
      ],
      [
        '5',
        'audit ?action= 100 emoji',
        [400],
        () => send(url, token, 'GET', `/api/admin/audit?action=${encodeURIComponent('😀'.repeat(100))}`),
      ],
      [
        '6',
        'search: 10 keys, every filter at 10 values',
        [200],
        () => {
          const q = new URLSearchParams({ q: 'anything', kind: 'all' });
          for (const k of ['project', 'type', 'concept', 'file', 'author', 'platform'])
            for (let i = 0; i < 10; i++) q.append(k, `${k}${i}`);
          return send(url, token, 'GET', `/api/search?${q}`);
        },
      ],
      ['7', 'GET /mcp', [405], () => send(url, token, 'GET', '/mcp', { headers: { accept: 'text/event-stream' } })],
      [
        '10',
        'rename onto another key',
        [200, 409],
        () =>
          send(url, token, 'POST', '/api/admin/projects/rename', {
            body: { from: 'github.com/bench/hostile', to: 'github.com/bench/other' },
          }),
      ],
      [
        '11',
        'session_id manual:1:1',
        [400],
        () =>
          send(url, token, 'POST', '/api/sessions/init', { body: event({ session_id: 'manual:1:1', prompt: 'x' }) }),
      ],
      [
        '13',
        '50 x-cairn-device values (slowest of 50)',
        [200],
        async () => {
          let response;
          let ms = 0;
          for (let i = 0; i < 50; i++) {
            const t0 = performance.now();
            response = await send(url, token, 'GET', '/api/projects', { headers: { 'x-cairn-device': `box-${i}` } });
            if (i < 49) await response.arrayBuffer();
            ms = Math.max(ms, performance.now() - t0);
          }
          return { response, ms };
        },
      ],
    ];
    for (const [row, what, expected, run] of cases) {
      const r = await underLoad(url, bystander, run);
      const ok = expected.includes(r.status) && r.ms <= BOUND_MS && r.worst <= BOUND_MS;
      rows.push({ row, what, expected, before: BEFORE[row] ?? '', ...r, ok });
      log(
        `row ${row}: ${what} → ${r.status} ${r.code} in ${r.ms.toFixed(0)} ms; bystander worst ${r.worst.toFixed(0)} ms over ${r.polls} polls ${ok ? 'ok' : 'FAILED'}`,
      );
    }
  } finally {
    await server.stop();
  }
  const table = [
    '| row | input | before (review) | answer now | time | other caller, slowest answer meanwhile | within 2 s |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.row} | \`${r.what}\` | ${r.before} | ${r.status}${r.code ? ` ${r.code}` : ''} | ${r.ms.toFixed(0)} ms | ${r.worst.toFixed(0)} ms (${r.polls} polls) | ${r.ok ? 'yes' : '**no**'} |`,
    ),
  ];
  writeSection(
    'hostile',
    `## Hostile input (issue 14)\n\n\`node bench/hostile.bench.mjs\`: each input sent once to a snapshot \`wrangler dev\` (local mode) while another team's token polls \`GET /api/projects\`; ${new Date().toISOString().slice(0, 10)}, this 2-core machine shared with other work. Client-side redaction budgets are checked in \`hooks-client/test/redaction.test.ts\`.\n\n${table.join('\n')}`,
  );
  if (rows.some((r) => !r.ok)) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
