// `cairn admin …`: team administration over /api/admin/* (admin token from the config) and the operator's
// team bootstrap (CAIRN_ADMIN_SECRET). Plain fetch, no dependencies; --json prints the server's answer.
import { parseArgs } from 'node:util';
import { loadConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { jsonText, termLine } from '../util/terminal';
import { renderServerHealth, renderTeamHealth, type ServerHealthBody, type TeamHealthBody } from './health';
import { renderReview, reviewDecision, type ReviewBody } from './admin-review';

const USAGE = `usage: cairn admin <command> [--json]

  team create --team <slug> --user <handle> [--device <name>] [--role owner|admin|member|reader]
                                            (operator: needs CAIRN_ADMIN_SECRET; prints the first token)
  whoami
  users                                     list members
  users add <handle> [--role member|admin|owner|reader]
  users role <handle> <member|admin|owner|reader>
                                            a reader reads the team's memory, writes only to their own projects
  users remove <handle>                     also revokes all their tokens
  devices                                   list devices
  devices enroll <name> [--user <handle>] [--scopes ingest,read] [--label <text>] [--expires-days <n>]
                                            prints the new device token once
  tokens [--user <handle>] [--all]          list tokens (prefix only, never the token)
  tokens revoke <id>
  tokens rotate <id>                        prints the replacement token once
  projects                                  list projects
  projects rename <old-key> <new-key>       the old key keeps resolving to the project
  projects merge <from-key> <into-key>
  projects private <key> | projects team <key>
  settings                                  show team settings
  settings set <key>=<value>…               value is JSON (30, true, ["Bash"]) or a plain string
  settings unset <key>…
                                            project_writers={"<project key>":["<handle>",…]}: who may write there
                                            capture=on|ask|off, capture_projects={"<project key>":"off"}:
                                            whether sessions are recorded (a project's own mode wins)
  audit [--limit <n>] [--action <name>]
  health                                    the observer's state, the backlog, dead letters, budget, retention,
                                            the daily cron and the database's size
  health --operator [--cursor N] [--limit N] every database and a page of teams (needs CAIRN_ADMIN_SECRET)
  observer retry                            try the observer again now (after fixing its key or raising a cap)
  held                                      records held back from teammates as instruction-like text
  release <12|#12|S12|P12>…                 let held records reach teammates' context (after reading them)
  review                                    proposals waiting for a decision (consolidation: review), with what
                                            each would change; counts of flagged, superseded and held records
  review accept <proposal> | review discard <proposal>
`;

class UsageError extends Error {}

interface Answer {
  status: number;
  body: unknown;
}

interface Ctx {
  io: Io;
  url: string;
  token: string | null;
  device: string | null;
  json: boolean;
}

async function request(ctx: Ctx, method: string, path: string, body?: unknown, bearer = ctx.token): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (ctx.device) headers['x-cairn-device'] = ctx.device;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${ctx.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.status, body: parsed };
}

function failure(a: Answer): string {
  const e = (a.body as { error?: { code?: string; message?: string } } | null)?.error;
  if (e?.code) return `${a.status} ${e.code}: ${e.message ?? ''}`.trim();
  return `HTTP ${a.status}`;
}

/**
 * Renders rows as aligned columns; objects in cells are shown as compact JSON. A cell is one line whatever the
 * server stored (termLine): a key holding a newline cannot draw a row of its own.
 */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cell = (v: unknown) =>
    termLine(v === null || v === undefined ? '-' : typeof v === 'object' ? jsonText(v) : String(v));
  const grid = [columns, ...rows.map((r) => columns.map((c) => cell(r[c])))];
  const widths = columns.map((_, i) => Math.max(...grid.map((r) => r[i]!.length)));
  return grid.map((r) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

const when = (ms: unknown) =>
  typeof ms === 'number' ? new Date(ms).toISOString().replace('T', ' ').slice(0, 16) : null;

/** Parses a `key=value` setting: JSON when it parses, else the raw string. */
export function parseSetting(arg: string): [string, unknown] {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new UsageError(`"${arg}" is not key=value`);
  const key = arg.slice(0, eq).trim();
  const raw = arg.slice(eq + 1);
  try {
    return [key, JSON.parse(raw)];
  } catch {
    return [key, raw];
  }
}

function need(v: string | undefined, what: string): string {
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

type Handler = (
  ctx: Ctx,
  args: string[],
  flags: Record<string, string | boolean | undefined>,
) => Promise<Answer & { show?: () => string }>;

const enc = encodeURIComponent;

const RELEASE_LISTS = { '': 'ids', '#': 'ids', o: 'ids', s: 'summaries', p: 'prompts' } as const;
type ReleaseList = (typeof RELEASE_LISTS)[keyof typeof RELEASE_LISTS];

/** `12`, `#12`, `O12` (observation), `S12` (summary), `P12` (prompt) into the release body's lists. */
export function releaseBody(refs: readonly string[]): Record<ReleaseList, number[]> {
  const body: Record<ReleaseList, number[]> = { ids: [], summaries: [], prompts: [] };
  for (const ref of refs) {
    const m = /^(#|o|s|p)?(\d{1,15})$/i.exec(ref.trim());
    if (!m) throw new UsageError(`"${ref}" is not a record id (12, #12, S12 or P12)`);
    body[RELEASE_LISTS[(m[1] ?? '').toLowerCase() as keyof typeof RELEASE_LISTS]].push(Number(m[2]));
  }
  return body;
}

const HANDLERS: Record<string, Handler> = {
  async whoami(ctx) {
    const a = await request(ctx, 'GET', '/api/admin/team');
    const b = a.body as {
      team?: { slug: string };
      you?: { handle: string; role: string; device: string | null; scopes: string[] };
    };
    return {
      ...a,
      show: () =>
        `${b.you?.handle} (${b.you?.role}) on team ${b.team?.slug}, device ${b.you?.device ?? '-'}, scopes ${b.you?.scopes.join(',')}\n`,
    };
  },

  async users(ctx, [sub, ...rest], flags) {
    if (!sub || sub === 'list') {
      const a = await request(ctx, 'GET', '/api/admin/users');
      const rows = ((a.body as { users?: Record<string, unknown>[] }).users ?? []).map((u) => ({
        ...u,
        removed_at: when(u.removed_at),
      }));
      return {
        ...a,
        show: () => table(rows, ['handle', 'role', 'devices', 'active_tokens', 'personal_memories', 'removed_at']),
      };
    }
    if (sub === 'add') {
      const a = await request(ctx, 'POST', '/api/admin/users', {
        handle: need(rest[0], 'handle'),
        role: flags.role ?? 'member',
      });
      return { ...a, show: () => `added ${rest[0]} as ${String(flags.role ?? 'member')}\n` };
    }
    if (sub === 'role') {
      const a = await request(ctx, 'PATCH', `/api/admin/users/${enc(need(rest[0], 'handle'))}`, {
        role: need(rest[1], 'role'),
      });
      return { ...a, show: () => `${rest[0]} is now ${rest[1]}\n` };
    }
    if (sub === 'remove') {
      const a = await request(ctx, 'DELETE', `/api/admin/users/${enc(need(rest[0], 'handle'))}`);
      return {
        ...a,
        show: () =>
          `removed ${rest[0]}; ${(a.body as { tokens_revoked?: number }).tokens_revoked ?? 0} token(s) revoked\n`,
      };
    }
    throw new UsageError(`unknown users command "${sub}"`);
  },

  async devices(ctx, [sub, ...rest], flags) {
    if (!sub || sub === 'list') {
      const a = await request(ctx, 'GET', '/api/admin/devices');
      const rows = ((a.body as { devices?: Record<string, unknown>[] }).devices ?? []).map((d) => ({
        ...d,
        created_at: when(d.created_at),
      }));
      return { ...a, show: () => table(rows, ['user', 'name', 'active_tokens', 'created_at']) };
    }
    if (sub === 'enroll') {
      const body: Record<string, unknown> = { name: need(rest[0], 'device name') };
      if (typeof flags.user === 'string') body.user = flags.user;
      if (typeof flags.scopes === 'string')
        body.scopes = flags.scopes
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
      if (typeof flags.label === 'string') body.label = flags.label;
      if (typeof flags['expires-days'] === 'string') body.expires_in_days = Number(flags['expires-days']);
      const a = await request(ctx, 'POST', '/api/admin/devices', body);
      const b = a.body as {
        token?: string;
        user?: string;
        device?: string;
        scopes?: string[];
        expires_at?: number | null;
      };
      return {
        ...a,
        show: () =>
          `enrolled ${b.device} for ${b.user} (scopes ${b.scopes?.join(',')}${b.expires_at ? `, expires ${when(b.expires_at)}` : ''})\n` +
          `token (shown once): ${b.token}\n` +
          `on that machine: cairn login --url ${ctx.url} --token ${b.token} --device ${b.device}\n`,
      };
    }
    throw new UsageError(`unknown devices command "${sub}"`);
  },

  async tokens(ctx, [sub, ...rest], flags) {
    if (!sub || sub === 'list') {
      const q = new URLSearchParams();
      if (typeof flags.user === 'string') q.set('user', flags.user);
      if (flags.all) q.set('include_revoked', '1');
      const a = await request(ctx, 'GET', `/api/admin/tokens${q.size ? `?${q}` : ''}`);
      const rows = ((a.body as { tokens?: Record<string, unknown>[] }).tokens ?? []).map((t) => ({
        ...t,
        scopes: (t.scopes as string[]).join(','),
        created_at: when(t.created_at),
        last_used_at: when(t.last_used_at),
        expires_at: when(t.expires_at),
        revoked_at: when(t.revoked_at),
      }));
      return {
        ...a,
        show: () =>
          table(rows, [
            'id',
            'prefix',
            'user',
            'device',
            'label',
            'scopes',
            'created_at',
            'last_used_at',
            'expires_at',
            'revoked_at',
          ]),
      };
    }
    const id = need(rest[0], 'token id');
    if (sub === 'revoke') {
      const a = await request(ctx, 'POST', `/api/admin/tokens/${enc(id)}/revoke`);
      return { ...a, show: () => `token ${id} revoked\n` };
    }
    if (sub === 'rotate') {
      const a = await request(ctx, 'POST', `/api/admin/tokens/${enc(id)}/rotate`);
      const b = a.body as { token?: string; token_id?: number };
      return { ...a, show: () => `token ${id} revoked; replacement ${b.token_id} (shown once): ${b.token}\n` };
    }
    throw new UsageError(`unknown tokens command "${sub}"`);
  },

  async projects(ctx, [sub, ...rest]) {
    if (!sub || sub === 'list') {
      const a = await request(ctx, 'GET', '/api/admin/projects');
      const rows = ((a.body as { projects?: Record<string, unknown>[] }).projects ?? []).map((p) => ({
        ...p,
        last_activity: when(p.last_activity),
        aliases: (p.aliases as string[]).join(' ') || null,
      }));
      return {
        ...a,
        show: () => table(rows, ['key', 'visibility', 'owner', 'observations', 'sessions', 'last_activity', 'aliases']),
      };
    }
    if (sub === 'rename') {
      const a = await request(ctx, 'POST', '/api/admin/projects/rename', {
        from: need(rest[0], 'old key'),
        to: need(rest[1], 'new key'),
      });
      return { ...a, show: () => `renamed ${rest[0]} → ${rest[1]} (the old key still works)\n` };
    }
    if (sub === 'merge') {
      const a = await request(ctx, 'POST', '/api/admin/projects/merge', {
        from: need(rest[0], 'from key'),
        into: need(rest[1], 'into key'),
      });
      return {
        ...a,
        show: () =>
          `merged ${rest[0]} into ${rest[1]}: ${JSON.stringify((a.body as { moved?: unknown }).moved ?? {})}\n`,
      };
    }
    if (sub === 'private' || sub === 'team') {
      const a = await request(ctx, 'POST', '/api/admin/projects/visibility', {
        key: need(rest[0], 'key'),
        visibility: sub,
      });
      return { ...a, show: () => `${rest[0]} is now ${sub === 'team' ? 'visible to the team' : 'private'}\n` };
    }
    throw new UsageError(`unknown projects command "${sub}"`);
  },

  async settings(ctx, [sub, ...rest]) {
    const show = (a: Answer) => () => `${JSON.stringify((a.body as { settings?: unknown }).settings ?? {}, null, 2)}\n`;
    if (!sub || sub === 'get') {
      const a = await request(ctx, 'GET', '/api/admin/settings');
      return { ...a, show: show(a) };
    }
    if (sub === 'set' || sub === 'unset') {
      if (rest.length === 0) throw new UsageError(`settings ${sub} needs at least one key`);
      const patch = Object.fromEntries(sub === 'set' ? rest.map(parseSetting) : rest.map((k) => [k, null]));
      const a = await request(ctx, 'PATCH', '/api/admin/settings', patch);
      return { ...a, show: show(a) };
    }
    throw new UsageError(`unknown settings command "${sub}"`);
  },

  async audit(ctx, _args, flags) {
    const q = new URLSearchParams();
    if (typeof flags.limit === 'string') q.set('limit', flags.limit);
    if (typeof flags.action === 'string') q.set('action', flags.action);
    const a = await request(ctx, 'GET', `/api/admin/audit${q.size ? `?${q}` : ''}`);
    const rows = ((a.body as { entries?: Record<string, unknown>[] }).entries ?? []).map((e) => ({
      ...e,
      created_at: when(e.created_at),
    }));
    return { ...a, show: () => table(rows, ['id', 'created_at', 'actor', 'action', 'target', 'detail']) };
  },

  async health(ctx, _args, flags) {
    if (flags.operator) {
      const secret = ctx.io.env.CAIRN_ADMIN_SECRET;
      if (!secret) throw new UsageError('health --operator needs the operator secret in CAIRN_ADMIN_SECRET');
      const q = new URLSearchParams();
      if (typeof flags.cursor === 'string') q.set('cursor', flags.cursor);
      if (typeof flags.limit === 'string') q.set('limit', flags.limit);
      const a = await request(ctx, 'GET', `/api/admin/teams/health${q.size ? `?${q}` : ''}`, undefined, secret);
      return { ...a, show: () => renderServerHealth(a.body as ServerHealthBody) };
    }
    const a = await request(ctx, 'GET', '/api/admin/health');
    return { ...a, show: () => renderTeamHealth(a.body as TeamHealthBody) };
  },

  async observer(ctx, [sub]) {
    if (sub !== 'retry') throw new UsageError('only "observer retry" exists');
    const a = await request(ctx, 'POST', '/api/admin/observer/retry');
    const b = a.body as { woken?: number; observer?: { state?: string; notice?: string | null } };
    return {
      ...a,
      show: () =>
        `the observer is tried again now; ${b.woken ?? 0} session(s) with waiting events woken (state: ${b.observer?.state ?? '?'}).\n` +
        'The first of them is the probe: if the provider still refuses, `cairn admin health` shows it within a minute.\n',
    };
  },

  async held(ctx) {
    const a = await request(ctx, 'GET', '/api/admin/review');
    const rows = ((a.body as { held?: Record<string, unknown>[] }).held ?? []).map((r) => ({
      ...r,
      id: `${r.kind === 'summary' ? 'S' : r.kind === 'prompt' ? 'P' : '#'}${String(r.id)}`,
      held: (r.held as string[]).join(','),
      // Written by someone else and possibly hostile: shown as one line of at most 80 characters.
      title: typeof r.title === 'string' ? r.title.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').slice(0, 80) : null,
    }));
    return { ...a, show: () => table(rows, ['id', 'project', 'author', 'held', 'title']) };
  },

  async release(ctx, refs) {
    if (refs.length === 0) throw new UsageError('name at least one record to release');
    const a = await request(ctx, 'POST', '/api/admin/release', releaseBody(refs));
    type Lists = Partial<Record<'observations' | 'summaries' | 'prompts', number[]>>;
    const b = a.body as { released?: Lists; not_held?: Lists };
    const names = (lists: Lists | undefined) => [
      ...(lists?.observations ?? []).map((n) => `#${n}`),
      ...(lists?.summaries ?? []).map((n) => `S${n}`),
      ...(lists?.prompts ?? []).map((n) => `P${n}`),
    ];
    const done = names(b.released);
    const missed = names(b.not_held);
    return {
      ...a,
      show: () =>
        (done.length ? `released ${done.join(', ')}: teammates' context includes them from now on\n` : '') +
        (missed.length ? `not held (released already, forgotten or unknown): ${missed.join(', ')}\n` : ''),
    };
  },

  async review(ctx, args) {
    if (args.length === 0) {
      const a = await request(ctx, 'GET', '/api/admin/review');
      return { ...a, show: () => renderReview(a.body as ReviewBody) };
    }
    const d = reviewDecision(args);
    if (!d) throw new UsageError('review accept <proposal> or review discard <proposal>');
    const a = await request(ctx, 'POST', `/api/admin/proposals/${d.id}`, { decision: d.decision });
    const records = ((a.body as { records?: number[] }).records ?? []).map((n) => `#${n}`).join(', ');
    return {
      ...a,
      show: () =>
        d.decision === 'accept'
          ? `proposal ${d.id} accepted: ${records} changed (cairn history shows the new versions)\n`
          : `proposal ${d.id} discarded: ${records} as they were\n`,
    };
  },

  async team(ctx, [sub], flags) {
    if (sub !== 'create') throw new UsageError('only "team create" exists');
    const secret = ctx.io.env.CAIRN_ADMIN_SECRET;
    if (!secret) throw new UsageError('team create needs the operator secret in CAIRN_ADMIN_SECRET');
    const body: Record<string, unknown> = {
      team: need(flags.team as string | undefined, '--team'),
      user: need(flags.user as string | undefined, '--user'),
    };
    if (typeof flags.device === 'string') body.device = flags.device;
    if (typeof flags.role === 'string') body.role = flags.role;
    const a = await request(ctx, 'POST', '/api/admin/teams', body, secret);
    const b = a.body as { token?: string; role?: string; scopes?: string[] };
    return {
      ...a,
      show: () =>
        `team ${String(body.team)}: ${String(body.user)} (${b.role}, scopes ${b.scopes?.join(',')})\ntoken (shown once): ${b.token}\n`,
    };
  },
};

export async function admin(args: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        all: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        role: { type: 'string' },
        user: { type: 'string' },
        scopes: { type: 'string' },
        label: { type: 'string' },
        'expires-days': { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        action: { type: 'string' },
        team: { type: 'string' },
        device: { type: 'string' },
        url: { type: 'string' },
        operator: { type: 'boolean' },
      },
    });
  } catch (e) {
    io.err(`cairn admin: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help || !command || command === 'help') {
    io.out(USAGE);
    return command || parsed.values.help ? 0 : 2;
  }
  const handler = HANDLERS[command];
  if (!handler) {
    io.err(`cairn admin: unknown command "${command}"\n${USAGE}`);
    return 2;
  }
  const config = loadConfig(io.env, pathsFor(io.env));
  const url = (parsed.values.url ?? config.url)?.replace(/\/+$/, '');
  if (!url) {
    io.err('cairn admin: no server configured (run: cairn login --url … --token …, or pass --url)\n');
    return 2;
  }
  if (command !== 'team' && !(command === 'health' && parsed.values.operator) && !config.token) {
    io.err('cairn admin: no token configured (CAIRN_TOKEN or cairn login)\n');
    return 2;
  }
  // `--device` names the device to enroll for `team create`; the header always carries this machine's name.
  const ctx: Ctx = { io, url, token: config.token, device: config.device, json: Boolean(parsed.values.json) };
  try {
    const answer = await handler(ctx, rest, parsed.values);
    if (answer.status < 200 || answer.status >= 300) {
      io.err(`cairn admin ${command}: ${failure(answer)}\n`);
      return 1;
    }
    io.out(ctx.json || !answer.show ? `${jsonText(answer.body, 2)}\n` : answer.show());
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`cairn admin ${command}: ${e.message}\n${USAGE}`);
      return 2;
    }
    io.err(`cairn admin ${command}: server not reachable at ${url} (${(e as Error).message})\n`);
    return 1;
  }
}
