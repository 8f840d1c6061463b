// A record's versions as text (MCP `history`, `cairn history`): each version's who, when, why and what it changed,
// every stored text through the fence (src/shared/fence.ts) since it is other people's data. Pure and linear: a
// changed text is shown as the lines it keeps around the lines it replaces (common head and tail), no LCS.
import { DATA_NOTICE, neutralize } from '#shared/fence';
import { dayAndClock } from '../recall/format';
import { CONTENT_FIELDS, type Changes, type FieldValue, type Version } from './model';

/** Lines shown of a long text around a change, and the most changed lines shown of one field. */
const CONTEXT_LINES = 1;
const MAX_LINES = 40;

const n = (s: string) => neutralize(s);

function quoted(v: FieldValue): string {
  if (v === null) return '—';
  if (Array.isArray(v)) return v.length ? v.map((x) => `"${n(x)}"`).join(', ') : '(none)';
  return `"${n(v)}"`;
}

/** `from` → `to` line by line: the common head and tail kept (a line of context each), the rest as -/+ lines. */
export function lineDiff(from: string, to: string): string[] {
  const a = from.split('\n');
  const b = to.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: string[] = [];
  if (head > CONTEXT_LINES) out.push('  …');
  for (let i = Math.max(0, head - CONTEXT_LINES); i < head; i++) out.push(`  ${n(a[i]!)}`);
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  for (const line of removed.slice(0, MAX_LINES)) out.push(`- ${n(line)}`);
  if (removed.length > MAX_LINES) out.push(`- … ${removed.length - MAX_LINES} more lines`);
  for (const line of added.slice(0, MAX_LINES)) out.push(`+ ${n(line)}`);
  if (added.length > MAX_LINES) out.push(`+ … ${added.length - MAX_LINES} more lines`);
  for (let i = a.length - tail; i < Math.min(a.length, a.length - tail + CONTEXT_LINES); i++) out.push(`  ${n(a[i]!)}`);
  if (tail > CONTEXT_LINES) out.push('  …');
  return out;
}

/** Each changed field: one line for short values, a line diff for a text that spans lines. */
export function renderChanges(changes: Changes, indent = '  '): string[] {
  const out: string[] = [];
  for (const f of CONTENT_FIELDS) {
    const c = changes[f];
    if (!c) continue;
    const multi =
      typeof c.from === 'string' && typeof c.to === 'string' && (c.from.includes('\n') || c.to.includes('\n'));
    if (multi) {
      out.push(`${indent}${f}:`);
      for (const line of lineDiff(c.from as string, c.to as string)) out.push(`${indent}  ${line}`);
    } else out.push(`${indent}${f}: ${quoted(c.from)} → ${quoted(c.to)}`);
  }
  return out;
}

const ref = (id: number | null, self: number) => (id === null ? 'current' : id === self ? 'outdated' : `#${id}`);

export function renderHistory(
  h: { id: number; superseded_by: number | null; version: number; versions: Version[] },
  timeZone = 'UTC',
): string {
  const status =
    h.superseded_by === null
      ? ''
      : ` · ${ref(h.superseded_by, h.id) === 'outdated' ? 'outdated' : `superseded by #${h.superseded_by}`}`;
  const out = [DATA_NOTICE, '', `#${h.id} · ${h.versions.length} versions, current: version ${h.version}${status}`];
  for (const v of h.versions) {
    const who = v.who ? ` by @${n(v.who)}` : '';
    const how =
      v.action === 'create'
        ? `created${who} (${n(v.actor)})`
        : `${n(v.action)}${who}${v.actor === 'user' ? '' : ` (${n(v.actor)})`}`;
    const why = v.reason ? `: ${n(v.reason)}` : '';
    out.push(`v${v.version} · ${dayAndClock(v.at, timeZone)} ${timeZone} · ${how}${why}`);
    if (v.state.superseded_by)
      out.push(`  status: ${ref(v.state.superseded_by.from, h.id)} → ${ref(v.state.superseded_by.to, h.id)}`);
    if (v.state.merged_into)
      out.push(`  merged into: ${ref(v.state.merged_into.from, h.id)} → ${ref(v.state.merged_into.to, h.id)}`);
    out.push(...renderChanges(v.changes));
  }
  return `${out.join('\n')}\n`;
}

export function renderDiff(d: {
  id: number;
  from: number;
  to: number;
  changes: Changes;
  superseded_by?: { from: number | null; to: number | null };
}): string {
  const out = [DATA_NOTICE, '', `#${d.id} · version ${d.from} → version ${d.to}`];
  if (d.superseded_by) out.push(`  status: ${ref(d.superseded_by.from, d.id)} → ${ref(d.superseded_by.to, d.id)}`);
  const lines = renderChanges(d.changes);
  out.push(...(lines.length || d.superseded_by ? lines : ['  (no difference)']));
  return `${out.join('\n')}\n`;
}
