// A record's versions, computed from its history (pure). Creation is version 1 and the n-th row of
// observation_events (by id) is version n+1: one history per record, whatever the act (edit, revert, supersede,
// flag, merge, release, review). An edit or a revert keeps what it changed in the record's text (`changes`, each
// field's before and after); the acts that change only its state keep the replacement or survivor in
// `by_observation_id`, so superseded_by and merged_into at any version follow from the actions alone. The text at
// version k is the current text with every later change undone; nothing here grows but with the one record's
// history, which the caller bounds (db/versions.ts MAX_HISTORY).

/** The fields an edit may change, as the row stores them (lists are JSON arrays in D1, lists here). */
export const CONTENT_FIELDS = [
  'title',
  'subtitle',
  'narrative',
  'facts',
  'concepts',
  'files_read',
  'files_modified',
] as const;
export type ContentField = (typeof CONTENT_FIELDS)[number];
export const LIST_FIELDS: readonly ContentField[] = ['facts', 'concepts', 'files_read', 'files_modified'];

export type FieldValue = string | null | string[];
export type Content = {
  title: string | null;
  subtitle: string | null;
  narrative: string | null;
  facts: string[];
  concepts: string[];
  files_read: string[];
  files_modified: string[];
};
export type FieldChange = { from: FieldValue; to: FieldValue };
export type Changes = Partial<Record<ContentField, FieldChange>>;

/** One row of the record's history as stored (oldest first). */
export interface HistoryRow {
  action: string;
  /** supersede: the replacement (null: outdated); merge/unmerge: the survivor; revert: superseded_by after it. */
  by: number | null;
  actor: string;
  who: string | null;
  reason: string | null;
  at: number;
  changes: Changes | null;
}

/** What the record's state fields were before and after a version, when the version changed them. */
export interface StateChanges {
  superseded_by?: { from: number | null; to: number | null };
  merged_into?: { from: number | null; to: number | null };
}

export interface Version {
  version: number;
  action: string;
  by: number | null;
  actor: string;
  who: string | null;
  reason: string | null;
  at: number;
  /** The text it changed (edits, reverts). */
  changes: Changes;
  /** The state it changed (supersede, restore, merge, unmerge, revert). */
  state: StateChanges;
}

/** The record now and who made it, for version 1. */
export interface RecordNow {
  id: number;
  content: Content;
  supersededBy: number | null;
  mergedInto: number | null;
  author: string | null;
  createdAt: number;
  /** How it came in (observer, remember, prime, import…): version 1's action says it. */
  source: string;
}

const same = (a: FieldValue, b: FieldValue): boolean =>
  Array.isArray(a) || Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : a === b;

/** Each field whose value differs between `a` and `b`, with both values. */
export function diffContent(a: Content, b: Content): Changes {
  const out: Changes = {};
  for (const f of CONTENT_FIELDS) if (!same(a[f], b[f])) out[f] = { from: a[f], to: b[f] };
  return out;
}

const isList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const validValue = (field: ContentField, v: unknown): v is FieldValue =>
  LIST_FIELDS.includes(field) ? isList(v) : v === null || typeof v === 'string';

/** A stored `changes` column read tolerantly: unknown fields and malformed values are left out. */
export function parseChanges(raw: string | null): Changes | null {
  if (raw === null) return null;
  let obj: unknown;
  try {
    obj = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return null;
  const out: Changes = {};
  for (const f of CONTENT_FIELDS) {
    const c = (obj as Record<string, unknown>)[f];
    if (!c || typeof c !== 'object') continue;
    const { from, to } = c as { from?: unknown; to?: unknown };
    if (validValue(f, from) && validValue(f, to)) out[f] = { from, to };
  }
  return out;
}

/** superseded_by after an act, given it before (`self`: the record's own id, for "outdated"). */
function supersededAfter(row: HistoryRow, before: number | null, self: number): number | null {
  if (row.action === 'supersede') return row.by ?? self;
  if (row.action === 'restore') return null;
  if (row.action === 'revert') return row.by;
  return before;
}

function mergedAfter(row: HistoryRow, before: number | null): number | null {
  if (row.action === 'merge') return row.by;
  if (row.action === 'unmerge') return null;
  return before;
}

/** The record's versions, oldest first: version 1 its creation, then one per history row. */
export function versionsOf(record: RecordNow, rows: readonly HistoryRow[]): Version[] {
  const out: Version[] = [
    {
      version: 1,
      action: 'create',
      by: null,
      actor: record.source,
      who: record.author,
      reason: null,
      at: record.createdAt,
      changes: {},
      state: {},
    },
  ];
  let superseded: number | null = null;
  let merged: number | null = null;
  rows.forEach((row, i) => {
    const state: StateChanges = {};
    const s = supersededAfter(row, superseded, record.id);
    if (s !== superseded) state.superseded_by = { from: superseded, to: s };
    const m = mergedAfter(row, merged);
    if (m !== merged) state.merged_into = { from: merged, to: m };
    superseded = s;
    merged = m;
    out.push({
      version: i + 2,
      action: row.action,
      by: row.by,
      actor: row.actor,
      who: row.who,
      reason: row.reason,
      at: row.at,
      changes: row.changes ?? {},
      state,
    });
  });
  return out;
}

/** The record's text at version `k` (1 ≤ k ≤ rows + 1): the current text with every later change undone. */
export function contentAt(current: Content, rows: readonly HistoryRow[], k: number): Content {
  const out: Content = { ...current };
  const set = out as Record<ContentField, FieldValue>;
  for (let i = rows.length - 1; i >= k - 1; i--) {
    const changes = rows[i]!.changes;
    if (!changes) continue;
    for (const f of CONTENT_FIELDS) {
      const c = changes[f];
      if (c) set[f] = c.from;
    }
  }
  return out;
}

/** superseded_by at version `k`: null at creation, then as each act up to version k left it. */
export function supersededAt(record: Pick<RecordNow, 'id'>, rows: readonly HistoryRow[], k: number): number | null {
  let s: number | null = null;
  for (let i = 0; i < Math.min(rows.length, k - 1); i++) s = supersededAfter(rows[i]!, s, record.id);
  return s;
}

/** What changed from version `a` to version `b` (either order): the text's fields, and superseded_by. */
export function diffVersions(
  record: Pick<RecordNow, 'id' | 'content'>,
  rows: readonly HistoryRow[],
  a: number,
  b: number,
): { changes: Changes; superseded_by?: { from: number | null; to: number | null } } {
  const changes = diffContent(contentAt(record.content, rows, a), contentAt(record.content, rows, b));
  const [sa, sb] = [supersededAt(record, rows, a), supersededAt(record, rows, b)];
  return sa === sb ? { changes } : { changes, superseded_by: { from: sa, to: sb } };
}
