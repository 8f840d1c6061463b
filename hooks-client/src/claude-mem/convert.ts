// claude-mem rows → cairn's NDJSON import records (docs/contracts.md § Export / import). Pure: the same rows
// give the same records, so a second import matches every row the first one stored (sessions by key,
// prompts by number, observations and summaries by content hash).
import { scrubText } from '../privacy/scrub';
import { localKey } from '../project/remote';
import type { ClaudeMemRows, Row } from './read';

export type ImportRecord = Record<string, unknown> & { kind: string };

export interface Converted {
  records: ImportRecord[];
  /** claude-mem project name → the cairn project key its rows went to. */
  projects: Map<string, string>;
  /** Names with no --map, in first-seen order (they went to the importer's private local/NAME). */
  unmapped: string[];
  counts: { sessions: number; prompts: number; observations: number; summaries: number; skipped: number };
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const int = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0
    ? Math.floor(v)
    : typeof v === 'bigint' && v >= 0n
      ? Number(v)
      : 0;
const cut = (s: string, max: number): string => (s.length > max ? s.slice(0, max) : s);
const clean = (v: unknown, max: number): string | null => {
  const s = str(v);
  return s === null ? null : cut(scrubText(s), max);
};

/** A time in ms: the *_epoch column when claude-mem wrote one, else its ISO text, else 0. */
function epoch(row: Row, col: string): number | null {
  const ms = row[`${col}_epoch`];
  if (typeof ms === 'number' && Number.isFinite(ms) && ms > 0) return Math.floor(ms);
  const t = Date.parse(str(row[col]) ?? '');
  return Number.isNaN(t) ? null : t;
}

/** claude-mem keeps lists as JSON text; a bad or missing one is an empty list (≤ 200 items of ≤ 4,000 chars). */
function list(v: unknown, scrub = false): string[] {
  let parsed: unknown;
  try {
    parsed = typeof v === 'string' ? JSON.parse(v) : v;
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed
    .map(str)
    .filter((s): s is string => s !== null && s.trim() !== '')
    .slice(0, 200)
    .map((s) => cut(scrub ? scrubText(s) : s, 4_000));
}

/** claude-mem normalises platforms to claude/codex/cursor/…; cairn's live hooks name Claude Code `claude-code`. */
function platformOf(session: Row): string {
  if (String(session.memory_session_id ?? '').startsWith('manual-')) return 'manual';
  const p = (str(session.platform_source) ?? '').trim().toLowerCase();
  return !p || p === 'claude' ? 'claude-code' : cut(p, 50);
}

interface SessionRef {
  key: string;
}

export function convert(rows: ClaudeMemRows, map: ReadonlyMap<string, string>, handle: string): Converted {
  const records: ImportRecord[] = [];
  const projects = new Map<string, string>();
  const unmapped: string[] = [];
  const counts = { sessions: 0, prompts: 0, observations: 0, summaries: 0, skipped: 0 };
  const keyFor = (name: string, at: number): string => {
    let key = projects.get(name);
    if (key !== undefined) return key;
    key = map.get(name);
    if (key === undefined) {
      key = localKey(name);
      unmapped.push(name);
      // Named before its sessions, so the server makes it private to the importer instead of a team project.
      records.push({ kind: 'project', key, visibility: 'private', owner: handle, created_at: at });
    }
    projects.set(name, key);
    return key;
  };

  const byDbId = new Map<number, SessionRef>();
  const byMemoryId = new Map<string, SessionRef>();
  const byContentId = new Map<string, SessionRef>();
  const promptsPer = new Map<number, number>();
  for (const p of rows.prompts)
    promptsPer.set(int(p.session_db_id), Math.max(promptsPer.get(int(p.session_db_id)) ?? 0, int(p.prompt_number)));

  for (const s of rows.sessions) {
    const content = str(s.content_session_id) ?? str(s.memory_session_id);
    if (!content) {
      counts.skipped++;
      continue;
    }
    const platform = platformOf(s);
    const started = epoch(s, 'started_at') ?? 0;
    const ref = { key: cut(`claude-mem:${platform}:${content}`, 200) };
    const project = keyFor(str(s.project)?.trim() || 'claude-mem', started);
    records.push({
      kind: 'session',
      session_key: ref.key,
      project,
      user: handle,
      platform,
      prompt_count: Math.max(int(s.prompt_counter), promptsPer.get(int(s.id)) ?? 0),
      started_at: started,
      ended_at: epoch(s, 'completed_at'),
    });
    counts.sessions++;
    byDbId.set(int(s.id), ref);
    const memory = str(s.memory_session_id);
    if (memory) byMemoryId.set(memory, ref);
    if (!byContentId.has(content)) byContentId.set(content, ref);
  }

  const inSession = (ref: SessionRef, row: Row) => ({
    session_key: ref.key,
    prompt_number: int(row.prompt_number),
    prompt_id: null,
    author: handle,
    created_at: epoch(row, 'created_at') ?? 0,
  });

  for (const p of rows.prompts) {
    const ref = byDbId.get(int(p.session_db_id)) ?? byContentId.get(str(p.content_session_id) ?? '');
    const text = clean(p.prompt_text, 100_000);
    if (!ref || text === null) {
      counts.skipped++;
      continue;
    }
    records.push({ kind: 'prompt', ...inSession(ref, p), text });
    counts.prompts++;
  }

  for (const o of rows.observations) {
    const ref = byMemoryId.get(str(o.memory_session_id) ?? '');
    const type = str(o.type)?.trim();
    if (!ref || !type) {
      counts.skipped++;
      continue;
    }
    const manual = String(o.memory_session_id).startsWith('manual-');
    records.push({
      kind: 'observation',
      ...inSession(ref, o),
      type: cut(type, 60),
      title: clean(o.title, 2_000),
      subtitle: clean(o.subtitle, 2_000),
      facts: list(o.facts, true),
      narrative: clean(o.narrative ?? o.text, 100_000),
      concepts: list(o.concepts),
      files_read: list(o.files_read),
      files_modified: list(o.files_modified),
      discovery_tokens: int(o.discovery_tokens),
      // claude-mem's own hash is unique per session; the row id stands in for rows written before it had one.
      content_hash: `claude-mem:${str(o.content_hash) ?? `obs-${int(o.id)}`}`,
      agent_id: clean(o.agent_id, 200),
      agent_type: clean(o.agent_type, 200),
      source: manual ? 'remember' : 'claude-mem',
    });
    counts.observations++;
  }

  for (const s of rows.summaries) {
    const ref = byMemoryId.get(str(s.memory_session_id) ?? '');
    if (!ref) {
      counts.skipped++;
      continue;
    }
    const field = (k: string) => clean(s[k], 100_000) ?? '';
    records.push({
      kind: 'summary',
      ...inSession(ref, s),
      request: field('request'),
      investigated: field('investigated'),
      learned: field('learned'),
      completed: field('completed'),
      next_steps: field('next_steps'),
      notes: clean(s.notes, 100_000),
      content_hash: `claude-mem:sum-${int(s.id)}`,
    });
    counts.summaries++;
  }
  return { records, projects, unmapped, counts };
}
