// Text for `cairn admin health` (a team, GET /api/admin/health) and `cairn admin health --operator` (every team
// and database, GET /api/admin/teams/health). Pure: the server's answer and the time in, lines out.

interface Observer {
  state?: string;
  provider?: string;
  model?: string | null;
  code?: string | null;
  detail?: string | null;
  since?: number | null;
  retry_at?: number | null;
  last_ok_at?: number | null;
  notice?: string | null;
}

interface Maintenance {
  job: string;
  started_at: number;
  finished_at: number | null;
  ok: boolean | null;
  error: string | null;
}

interface Shard {
  binding: string;
  size_bytes: number | null;
  limit_bytes: number;
  teams?: number;
}

export interface TeamHealthBody {
  team?: string;
  observer?: Observer;
  events?: { sessions: number; pending: number; oldest_age_ms: number | null };
  dead_letters?: { retryable: number; retired: number };
  /** Records the embedder refused 3 times: found by keyword search only. */
  vectors?: { skipped: number };
  budget?: {
    per_day: number | null;
    per_month: number | null;
    spent_today: number;
    spent_this_month: number;
    notice: string | null;
  } | null;
  retention?: { days: number | null; last_sweep: { at: number; detail: Record<string, unknown> } | null };
  maintenance?: Maintenance[];
  shard?: Shard;
  digest?: {
    schedule: string;
    period: string | null;
    attempts: number;
    last_sent_at: number | null;
    failing_since: number | null;
    error: string | null;
  } | null;
}

export interface ServerHealthBody {
  teams?: TeamHealthBody[];
  /** The next page of teams (`--cursor`); null or absent on the last. */
  next_cursor?: string | null;
  shards?: Shard[];
  maintenance?: Maintenance[];
}

const when = (ms: number | null | undefined) =>
  typeof ms === 'number' ? `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC` : '-';
const age = (ms: number) =>
  ms < 90_000
    ? `${Math.round(ms / 1000)} s`
    : ms < 5_400_000
      ? `${Math.round(ms / 60_000)} min`
      : `${(ms / 3_600_000).toFixed(1)} h`;
const gb = (bytes: number) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`);

function observerLine(o: Observer): string {
  const who = `${o.provider ?? '?'}${o.model ? ` (${o.model})` : ''}`;
  if (o.state === 'ok' || !o.state)
    return `observer: ${who}: ok${o.last_ok_at ? ` (recovered ${when(o.last_ok_at)})` : ''}`;
  const next = o.retry_at ? `; next try ${when(o.retry_at)}` : '';
  return `observer: ${who}: ${o.state.toUpperCase().replace('_', ' ')} since ${when(o.since)}${o.code ? ` (${o.code})` : ''}${next}`;
}

export function shardLine(s: Shard): string {
  if (s.size_bytes === null) return `${s.binding}: size unknown`;
  return `${s.binding}: ${gb(s.size_bytes)} of ${gb(s.limit_bytes)} (${((s.size_bytes / s.limit_bytes) * 100).toFixed(1)}%)${s.teams === undefined ? '' : `, ${s.teams} team(s)`}`;
}

function cronLines(runs: Maintenance[]): string[] {
  if (!runs.length) return ['cron: no run recorded yet (it runs daily at 03:17 UTC)'];
  return runs.map((r) => {
    const how = r.ok === null ? 'started, not finished' : r.ok ? 'ok' : `FAILED: ${r.error ?? ''}`;
    return `cron ${r.job}: ${how} (${when(r.started_at)})`;
  });
}

export function renderTeamHealth(h: TeamHealthBody): string {
  const lines = [`team ${h.team ?? '?'}`];
  if (h.observer) {
    lines.push(observerLine(h.observer));
    if (h.observer.detail) lines.push(`  provider said: ${h.observer.detail}`);
  }
  const e = h.events;
  if (e)
    lines.push(
      `events: ${e.pending} pending in ${e.sessions} session(s)${e.oldest_age_ms !== null ? `, the oldest waiting ${age(e.oldest_age_ms)}` : ''}`,
    );
  if (h.dead_letters)
    lines.push(
      `dead letters: ${h.dead_letters.retryable} retryable (POST /api/sessions/<id>/dead-letters/retry), ${h.dead_letters.retired} in emptied sessions`,
    );
  const skipped = h.vectors?.skipped;
  if (typeof skipped === 'number' && skipped > 0)
    lines.push(`vectors: ${skipped} record(s) the embedder refused 3 times; search finds them by keyword only`);
  const b = h.budget;
  lines.push(
    b
      ? `budget: ${b.spent_today}${b.per_day ? ` of ${b.per_day}` : ''} tokens today, ${b.spent_this_month}${b.per_month ? ` of ${b.per_month}` : ''} this month${b.notice ? ` (${b.notice})` : ''}`
      : 'budget: none set',
  );
  const r = h.retention;
  if (r)
    lines.push(
      `retention: ${r.days ? `${r.days} days` : 'keep everything'}${r.last_sweep ? `; last sweep ${when(r.last_sweep.at)} ${JSON.stringify(r.last_sweep.detail)}` : ''}`,
    );
  const g = h.digest;
  if (g)
    lines.push(
      g.error
        ? `digest: ${g.schedule}, FAILING since ${when(g.failing_since)} (${g.period}, ${g.attempts} attempts): ${g.error}; last sent ${when(g.last_sent_at)}`
        : `digest: ${g.schedule}, last sent ${when(g.last_sent_at)}`,
    );
  if (h.shard) lines.push(`database ${shardLine(h.shard)}`);
  lines.push(...cronLines(h.maintenance ?? []));
  if (h.observer?.notice) lines.push('', h.observer.notice);
  return `${lines.join('\n')}\n`;
}

export function renderServerHealth(h: ServerHealthBody): string {
  const lines = [
    'databases:',
    ...(h.shards ?? []).map((s) => `  ${shardLine(s)}`),
    ...cronLines(h.maintenance ?? []),
    '',
    'teams:',
  ];
  for (const t of h.teams ?? []) {
    const o = t.observer ?? {};
    const e = t.events;
    lines.push(
      `  ${t.team}: observer ${o.state ?? '?'}${o.code ? ` (${o.code})` : ''}; ${e?.pending ?? 0} pending${e?.oldest_age_ms ? `, oldest ${age(e.oldest_age_ms)}` : ''}; ` +
        `${t.dead_letters?.retryable ?? 0} dead letters; on ${t.shard?.binding ?? '?'}`,
    );
  }
  if (!(h.teams ?? []).length && !h.next_cursor) lines.push('  (none yet: npm run deploy creates the first)');
  // Digits only (a team id): anything else from the server is not printed.
  if (h.next_cursor && /^\d{1,15}$/.test(h.next_cursor))
    lines.push(`  more teams: cairn admin health --operator --cursor ${h.next_cursor}`);
  return `${lines.join('\n')}\n`;
}
