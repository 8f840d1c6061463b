// Walks the Worker's route table (app.routes) and proves that every route but the declared public ones refuses a
// request without a token (401) and one whose token lacks the route's scope (403), and lets the right scope in.
import { describe, expect, it } from 'vitest';
import app from '../../../src/app';
import { call, newIdentity } from '../support/http';
import { addTeammate } from '../teams/support';

type Need = 'ingest' | 'read' | 'ingest-or-read' | 'admin';

/** What the contract (docs/contracts.md) says each prefix needs. A route under no prefix here fails the walk. */
const NEEDS: { prefix: string; need: (method: string) => Need }[] = [
  { prefix: '/api/sessions', need: (m) => (m === 'GET' ? 'ingest-or-read' : 'ingest') },
  { prefix: '/api/events', need: () => 'ingest' },
  { prefix: '/api/forget', need: () => 'ingest' },
  { prefix: '/api/prime', need: () => 'ingest' },
  { prefix: '/api/corrections', need: (m) => (m === 'GET' ? 'ingest-or-read' : 'ingest') },
  { prefix: '/api/memory', need: (m) => (m === 'GET' ? 'ingest-or-read' : 'ingest') },
  { prefix: '/api/handoff', need: (m) => (m === 'GET' ? 'ingest-or-read' : 'ingest') },
  { prefix: '/api/standup', need: () => 'read' },
  { prefix: '/api/jobs', need: (m) => (m === 'GET' ? 'ingest-or-read' : 'ingest') },
  { prefix: '/api/context', need: () => 'read' },
  { prefix: '/api/timeline', need: () => 'read' },
  { prefix: '/api/observations', need: () => 'read' },
  { prefix: '/api/projects', need: () => 'read' },
  { prefix: '/api/search', need: () => 'read' },
  { prefix: '/api/receipts', need: () => 'read' },
  { prefix: '/api/viewer', need: () => 'read' },
  { prefix: '/api/live', need: () => 'read' },
  { prefix: '/api/observer', need: (m) => (m === 'GET' ? 'ingest-or-read' : 'ingest') },
  { prefix: '/api/admin', need: () => 'admin' },
  { prefix: '/mcp', need: () => 'read' },
];

/** Routes anyone may call. */
const PUBLIC = new Set([
  'GET /',
  'GET /viewer/:file',
  'GET /install/cairn.mjs',
  'GET /api/health',
  'POST /api/admin/teams',
  // The operator's, like bootstrap: no bearer token but CAIRN_ADMIN_SECRET (test/worker/shards/shards.test.ts).
  'POST /api/admin/teams/:slug/move',
  // The operator's view of every team (test/worker/health/health-routes.test.ts).
  'GET /api/admin/teams/health',
  // The operator's backups and restores (test/worker/backup/backup-restore.test.ts refuses a request without the secret).
  'GET /api/admin/teams/:slug/backups',
  'POST /api/admin/teams/:slug/backups',
  'POST /api/admin/teams/:slug/restore',
  'GET /api/admin/teams/:slug/jobs/:id',
]);

/** Every concrete route of the table (middleware-only patterns with `*` left out), as "METHOD /path". */
function routeTable(): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const r of app.routes) {
    if (r.path.includes('*')) continue;
    const method = r.method === 'ALL' ? 'POST' : r.method;
    seen.set(`${method} ${r.path}`, { method, path: r.path });
  }
  return [...seen.values()];
}

const needOf = (method: string, path: string): Need | undefined =>
  NEEDS.find((n) => path === n.prefix || path.startsWith(`${n.prefix}/`))?.need(method);

// An id no row has: the right-scope call must not rotate or remove anything real (the owner's token is id 1).
const concrete = (path: string) => path.replace(/:\w+/g, '999999999');

async function status(method: string, path: string, token?: string): Promise<{ status: number; code?: string }> {
  const res = await call(concrete(path), {
    method,
    token,
    ...(method === 'GET' || method === 'HEAD' ? {} : { json: {} }),
  });
  const type = res.headers.get('content-type') ?? '';
  const body = type.includes('application/json')
    ? ((await res.json()) as { error?: { code: string } })
    : (await res.body?.cancel(), undefined);
  return { status: res.status, code: body?.error?.code };
}

describe('the route table', () => {
  it('declares every route: public, or under a prefix whose scope the contract names', () => {
    const routes = routeTable();
    expect(routes.length).toBeGreaterThan(30);
    const undeclared = routes.filter(
      (r) => !PUBLIC.has(`${r.method} ${r.path}`) && needOf(r.method, r.path) === undefined,
    );
    expect(undeclared).toEqual([]);
  });

  it('refuses a missing token with 401 and a token without the route scope with 403 on every non-public route', async () => {
    const owner = await newIdentity({ role: 'owner' });
    const only = {
      ingest: (await addTeammate(owner, 'ingest-only', { scopes: ['ingest'] })).token,
      read: (await addTeammate(owner, 'read-only', { scopes: ['read'] })).token,
      admin: (await addTeammate(owner, 'admin-only', { role: 'admin', scopes: ['admin'] })).token,
      member: (await addTeammate(owner, 'member', { scopes: ['ingest', 'read'] })).token,
    };
    // For each need: a token that must be refused, and one that must be let through the guard.
    const tokens: Record<Need, { wrong: string; right: string }> = {
      ingest: { wrong: only.read, right: only.ingest },
      read: { wrong: only.ingest, right: only.read },
      'ingest-or-read': { wrong: only.admin, right: only.read },
      admin: { wrong: only.member, right: owner.token },
    };
    const failures: string[] = [];
    for (const { method, path } of routeTable()) {
      if (PUBLIC.has(`${method} ${path}`)) continue;
      const need = needOf(method, path)!;
      const anonymous = await status(method, path);
      if (anonymous.status !== 401) failures.push(`${method} ${path} without a token: ${anonymous.status}`);
      const wrong = await status(method, path, tokens[need].wrong);
      if (wrong.status !== 403 || wrong.code !== 'insufficient_scope')
        failures.push(`${method} ${path} without "${need}": ${wrong.status} ${wrong.code}`);
      const right = await status(method, path, tokens[need].right);
      if (right.status === 401 || right.status === 403)
        failures.push(`${method} ${path} with "${need}": ${right.status} ${right.code}`);
    }
    expect(failures).toEqual([]);
  });

  it('keeps the public routes public', async () => {
    for (const route of ['GET /api/health', 'GET /install/cairn.mjs', 'GET /']) {
      const [method, path] = route.split(' ') as [string, string];
      expect((await status(method, path)).status, route).toBe(200);
    }
  });

  it('lets only owners and admins back-fill vectors: a member token is refused even with every other scope', async () => {
    const owner = await newIdentity({ role: 'owner' });
    const member = await addTeammate(owner, 'mate', { scopes: ['ingest', 'read'] });
    const res = await call('/api/admin/backfill-vectors', { method: 'POST', token: member.token });
    expect(res.status).toBe(403);
    const ok = await call('/api/admin/backfill-vectors?limit=1', { method: 'POST', token: owner.token });
    expect(ok.status).toBe(200);
  });
});
