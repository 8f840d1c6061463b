// What the restart drills share (bench/restart.bench.mjs, bench/alarm-delay.bench.mjs): a snapshot wrangler dev in its
// own process group on a given state folder, killed with SIGKILL as a crash or an eviction would, the ingest POST,
// and D1's view of a session through a route that never wakes the session's object.
import { startDevServer } from '../../scripts/dev-server.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** wrangler dev for `root` (undefined: this tree) on `persistTo`, observing with the fake Messages API at `fakeUrl`. */
export async function startDrillServer(root, port, persistTo, fakeUrl, adminSecret) {
  return startDevServer({
    root,
    port,
    persistTo,
    snapshot: true,
    processGroup: true,
    timeoutMs: 300_000,
    vars: {
      CAIRN_ADMIN_SECRET: adminSecret,
      OBSERVER_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: fakeUrl,
    },
  });
}

export async function killTree(srv) {
  const exited = new Promise((r) =>
    srv.child.exitCode !== null || srv.child.signalCode !== null ? r() : srv.child.once('exit', r),
  );
  process.kill(-srv.child.pid, 'SIGKILL');
  await exited;
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(-srv.child.pid, 0);
    } catch {
      break;
    }
    await sleep(50);
  }
  await srv.stop();
}

export async function post(url, token, route, body) {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 202) throw new Error(`${route}: ${res.status} ${await res.text()}`);
}

/** D1's view of the session (the viewer's session route reads D1 only: it never wakes the session's object). */
export async function inD1(url, token, sid) {
  const res = await fetch(`${url}/api/viewer/sessions?key=${encodeURIComponent(sid)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status !== 200) return { observations: 0, summaries: 0, titles: [] };
  const v = await res.json();
  return {
    observations: v.observations.length,
    summaries: v.summaries.length,
    titles: v.observations.map((o) => o.title ?? ''),
  };
}
