// Before the Node files run: installs claude-mem and bun (pinned in scripts/tools/claude-mem) into
// .tools/claude-mem for the import tests (first run only; they are not devDependencies, so `npm install` stays
// lean), and opens the door to the run's one shared `wrangler dev` (test/support/shared-server.ts): started by
// the first file that asks for it, not before, so a run of files that need no server starts none.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
// @ts-expect-error plain ESM script without types
import { ensureTool } from '../../scripts/tools.mjs';
// @ts-expect-error plain ESM script without types
import { freePort, startDevServer } from '../../scripts/dev-server.mjs';

/** The shared server's admin secret (operator routes: each file makes its team with it). */
const SHARED_ADMIN_SECRET = 'shared-dev-admin-secret';

interface Dev {
  url: string;
  stop(): Promise<void>;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureTool('claude-mem');
  let persist: string | null = null;
  let dev: Promise<Dev> | null = null;
  const start = (): Promise<Dev> => {
    persist = mkdtempSync(path.join(tmpdir(), 'cairn-shared-dev-'));
    const started = (async () =>
      (await startDevServer({
        port: await freePort(),
        persistTo: persist,
        vars: { CAIRN_ADMIN_SECRET: SHARED_ADMIN_SECRET },
        timeoutMs: 180_000,
      })) as Dev)();
    // A start that failed is tried again by the next file that asks, not handed to every later file.
    started.catch(() => {
      if (dev === started) dev = null;
    });
    return started;
  };
  // One request a file: "the server, please". Concurrent askers share the one start.
  const door = createServer((req, res) => {
    dev ??= start();
    dev.then(
      (d) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: d.url })),
      (err: unknown) => res.writeHead(500).end(err instanceof Error ? err.message : String(err)),
    );
    req.resume();
  });
  await new Promise<void>((resolve) => door.listen(0, '127.0.0.1', resolve));
  project.provide('cairnSharedServerDoor', `http://127.0.0.1:${(door.address() as AddressInfo).port}`);
  project.provide('cairnSharedServerAdmin', SHARED_ADMIN_SECRET);
  return async () => {
    door.close();
    const d = await dev?.catch(() => null);
    await d?.stop();
    if (persist) rmSync(persist, { recursive: true, force: true });
  };
}
