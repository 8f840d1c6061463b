// The Node files' shared `wrangler dev`: one a run (started by test/node/global-setup.ts when the first file
// asks), not one a file (~20–50 s each on this machine). Its database is shared by every file that uses it, so
// each file makes its own team (`freshTeam`) and reads only what that team holds. A file that needs other
// settings (a rate limit, a refused observer key) or kills and restarts its server starts its own.
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    cairnSharedServerDoor: string;
    cairnSharedServerAdmin: string;
  }
}

export interface SharedServer {
  url: string;
  /** Its admin secret (operator routes: each file makes its team with it). */
  adminSecret: string;
}

/**
 * The time a beforeAll that calls sharedServer() may take: the first caller waits for `wrangler d1 migrations
 * apply` (twice) and `wrangler dev` to start, minutes on this 2-core machine under load; later callers wait
 * for that same start. A bound on a stall, not a speed claim.
 */
export const SHARED_SERVER_HOOK_MS = 420_000;

/** The run's shared server, started on the first call of the run (waits while it starts). */
export async function sharedServer(): Promise<SharedServer> {
  const res = await fetch(`${inject('cairnSharedServerDoor')}/server`, { method: 'POST' });
  if (!res.ok) throw new Error(`the shared wrangler dev did not start: ${await res.text()}`);
  const { url } = (await res.json()) as { url: string };
  return { url, adminSecret: inject('cairnSharedServerAdmin') };
}

/** A team name no other file (or earlier run against the same server) has used. */
export const freshTeam = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
