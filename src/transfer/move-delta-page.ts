// One page of a team move's change log, read (src/transfer/move-delta.ts applies it): what the entries name,
// grouped by table; the rows they name as the old database holds them now, with what those rows need beside them
// (their sessions and projects, the records their links name, the team's handles); and the fate of every key the log
// noted for a row that changed or went (gone from the old database, or given to another row since).
import { whoOf, type KeyOf, type Who } from './export';
import { fileIdsByObservation } from './queries/file-ids';
import { teamUsers } from './queries/transfer';
import {
  extraRows,
  idsByKeys,
  projectsByIds,
  rowsByIds,
  supportRows,
  type ProjectRowFull,
  type SessionRowFull,
} from './queries/move-rows';
import type { LogEntry } from './queries/move-log';
import { noDeletes, type TargetDeletes } from './queries/move-sync';

export type RecordTable = 'prompts' | 'observations' | 'summaries';
export const RECORD_TABLES: readonly RecordTable[] = ['prompts', 'observations', 'summaries'];

/** A record's key on either database: session key and content hash (a prompt: its number). */
export const pair = (sessionKey: string, key: string | number) => `${sessionKey}\u0000${key}`;

/** What a page of the log names, grouped: ids to look at now, and keys rows had when they changed or went. */
export interface Named {
  ids: Record<'projects' | 'sessions' | RecordTable, Set<number>>;
  /** Keys the log noted for rows deleted (or, for projects, changed): the id they belonged to. */
  keys: {
    projects: Map<string, number>;
    sessions: Map<string, number>;
    records: Record<RecordTable, Map<string, { id: number; sessionKey: string; key: string }>>;
  };
  signals: Set<number>;
  usage: Set<number>;
  aliases: Set<string>;
  tombstones: Map<string, { projectId: number; hash: string }>;
}

export function named(entries: readonly LogEntry[]): Named {
  const n: Named = {
    ids: {
      projects: new Set(),
      sessions: new Set(),
      prompts: new Set(),
      observations: new Set(),
      summaries: new Set(),
    },
    keys: {
      projects: new Map(),
      sessions: new Map(),
      records: { prompts: new Map(), observations: new Map(), summaries: new Map() },
    },
    signals: new Set(),
    usage: new Set(),
    aliases: new Set(),
    tombstones: new Map(),
  };
  for (const e of entries) {
    const id = e.rowId;
    if (e.tbl === 'projects' || e.tbl === 'sessions') {
      if (id !== null) n.ids[e.tbl].add(id);
      if (e.k1 !== null && id !== null) n.keys[e.tbl].set(e.k1, id);
    } else if (e.tbl === 'prompts' || e.tbl === 'observations' || e.tbl === 'summaries') {
      if (id !== null) n.ids[e.tbl].add(id);
      if (e.k1 !== null && e.k2 !== null && id !== null)
        n.keys.records[e.tbl].set(pair(e.k1, e.k2), { id, sessionKey: e.k1, key: e.k2 });
    } else if (e.tbl === 'signals' && id !== null) n.signals.add(id);
    else if (e.tbl === 'usage' && id !== null) n.usage.add(id);
    else if (e.tbl === 'aliases') {
      if (e.k1 !== null) n.aliases.add(e.k1);
      if (e.k2 !== null) n.aliases.add(e.k2);
    } else if (e.tbl === 'tombstones' && id !== null && e.k2 !== null)
      n.tombstones.set(`${id}\u0000${e.k2}`, { projectId: id, hash: e.k2 });
  }
  return n;
}

/** Logged keys whose row the old database has no more (`gone`) or gave to another row since (`reset`). */
export async function keyFates(source: D1Database, teamId: number, n: Named) {
  const recordWant = (t: RecordTable) => [...n.keys.records[t].values()];
  const now = await idsByKeys(source, teamId, {
    projects: [...n.keys.projects.keys()],
    sessions: [...n.keys.sessions.keys()],
    prompts: recordWant('prompts'),
    observations: recordWant('observations'),
    summaries: recordWant('summaries'),
  });
  const fate = (was: number, is: number | undefined) => (is === undefined ? 'gone' : is === was ? 'same' : 'reset');
  const split = <K>(logged: Iterable<[K, number]>, current: (k: K) => number | undefined) => {
    const out = { gone: [] as K[], reset: [] as K[] };
    for (const [k, was] of logged) {
      const f = fate(was, current(k));
      if (f !== 'same') out[f].push(k);
    }
    return out;
  };
  type Key = { sessionKey: string; key: string };
  const recordFate = (t: RecordTable) =>
    split<Key>(
      [...n.keys.records[t].values()].map((v) => [{ sessionKey: v.sessionKey, key: v.key }, v.id] as [Key, number]),
      (v) => now[t].get(pair(v.sessionKey, v.key))?.id,
    );
  const records: Record<RecordTable, { gone: Key[]; reset: Key[] }> = {
    prompts: recordFate('prompts'),
    observations: recordFate('observations'),
    summaries: recordFate('summaries'),
  };
  return {
    projects: split(n.keys.projects, (k) => now.projects.get(k)),
    sessions: split(n.keys.sessions, (k) => now.sessions.get(k)),
    records,
  };
}

export type Fates = Awaited<ReturnType<typeof keyFates>>;

/** The keys of `f` of one fate, as idsByKeys asks for them. */
export const keysOf = (f: Fates, which: 'gone' | 'reset') => ({
  projects: f.projects[which],
  sessions: f.sessions[which],
  prompts: f.records.prompts[which],
  observations: f.records.observations[which],
  summaries: f.records.summaries[which],
});

/** Of the target's ids `ids` (by key), those of the keys of one fate: what to delete there. */
export function deletesOf(
  ids: Awaited<ReturnType<typeof idsByKeys>>,
  f: Fates,
  which: 'gone' | 'reset',
): TargetDeletes {
  const del = noDeletes();
  const pick = <K>(list: K[], m: Map<K, number>) => list.flatMap((k) => (m.has(k) ? [m.get(k)!] : []));
  del.projects = pick(f.projects[which], ids.projects);
  del.sessions = pick(f.sessions[which], ids.sessions);
  for (const t of RECORD_TABLES)
    del[t] = f.records[t][which].flatMap((k) => {
      const r = ids[t].get(pair(k.sessionKey, k.key));
      return r ? [r.id] : [];
    });
  return del;
}

/** A page read: what it names, the rows as they are now and what they need, and the fates of its logged keys. */
export interface Page {
  n: Named;
  rows: Awaited<ReturnType<typeof rowsByIds>>;
  fates: Fates;
  extras: Awaited<ReturnType<typeof extraRows>>;
  links: Map<number, { sessionKey: string; key: string }>;
  sessionsById: Map<number, SessionRowFull>;
  projectsById: Map<number, ProjectRowFull>;
  who: Who;
  keyOf: KeyOf;
  /** The observations' evidence ids by path, carried on their lines (`file_ids`). */
  fileIds: Awaited<ReturnType<typeof fileIdsByObservation>>;
}

/** Reads what `entries` name on `source`: two or three round trips (the reads of each go together). */
export async function readPage(source: D1Database, teamId: number, entries: readonly LogEntry[]): Promise<Page> {
  const n = named(entries);
  const [rows, fates, extras, people, fileIds] = await Promise.all([
    rowsByIds(source, teamId, {
      projects: [...n.ids.projects],
      sessions: [...n.ids.sessions],
      prompts: [...n.ids.prompts],
      observations: [...n.ids.observations],
      summaries: [...n.ids.summaries],
    }),
    keyFates(source, teamId, n),
    extraRows(source, teamId, {
      signals: [...n.signals],
      usage: [...n.usage],
      aliases: [...n.aliases],
      tombstones: [...n.tombstones.values()],
    }),
    teamUsers(source, teamId),
    fileIdsByObservation(source, teamId, [...n.ids.observations]),
  ]);
  const records = [...rows.prompts, ...rows.observations, ...rows.summaries];
  // What the records need beside them: their sessions and projects (lines of the part), what their links name.
  const support = await supportRows(source, teamId, {
    sessions: [...new Set([...records.map((r) => r.sessionId), ...n.usage])],
    projects: [
      ...new Set([
        ...rows.sessions.map((s) => s.projectId),
        ...records.map((r) => r.projectId),
        ...[...n.tombstones.values()].map((t) => t.projectId),
        ...extras.aliases.map((a) => a.projectId),
      ]),
    ],
    observations: [
      ...new Set([
        ...rows.observations.flatMap((o) => [o.supersededBy, o.mergedInto].filter((x): x is number => x !== null)),
        ...n.signals,
      ]),
    ],
  });
  const sessionsById = new Map([...support.sessions, ...rows.sessions].map((s) => [s.id, s]));
  const projectsById = new Map([...support.projects, ...rows.projects].map((p) => [p.id, p]));
  // A session filed under another project than its records (moved by a merge since they were read): read it too.
  const missing = [...sessionsById.values()].map((s) => s.projectId).filter((id) => !projectsById.has(id));
  if (missing.length)
    for (const p of await projectsByIds(source, teamId, [...new Set(missing)])) projectsById.set(p.id, p);
  return {
    n,
    rows,
    fates,
    extras,
    links: new Map(support.links.map((o) => [o.id, { sessionKey: o.sessionKey, key: o.key }])),
    sessionsById,
    projectsById,
    who: whoOf(people),
    keyOf: (id) => sessionsById.get(id)?.sessionKey ?? `session-${id}`,
    fileIds,
  };
}
