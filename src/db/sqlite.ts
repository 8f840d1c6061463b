// Every SQLite-specific piece of SQL the queries need, in one place: FTS5 (MATCH, bm25, rowid joins),
// json_each lists, row-value comparisons and scalar functions drizzle has no builder for. Everything else in
// src/db/ is drizzle's query builder; a test keeps the `sql` template confined to this file and schema.ts.
import { and, sql, type AnyColumn, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { Db } from './client';
import { localVectors, observationEvents, observations, projectAliases, projects, sessions } from './schema';

/**
 * `col IN (values)` with the whole list bound as ONE JSON parameter: D1 allows 100 bound parameters per
 * statement, and an IN-list of ids or paths would otherwise spend one per element.
 */
export const inJsonList = (col: SQLWrapper, values: readonly (string | number)[]): SQL =>
  sql`${col} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;

/**
 * The rows `ids` name, each checked against `rest`: `col IN (ids) AND +(rest)`, for `col` the table's rowid or
 * the first column of an index. Without table statistics SQLite may guess that an equality such as `team_id = ?`
 * matches a handful of rows and walk that index instead of looking the ids up: workerd's SQLite did for every
 * `team_id = ? AND id IN (…)` and for summaries and prompts under the visibility rule — every row of the team,
 * each counted by D1 as a row read (test/worker/db/query-plans.test.ts), 16–28 ms at 100k rows instead of ≤ 1.
 * The unary `+` is SQLite's documented way to keep a term from choosing an index; what `rest` says is unchanged.
 */
export const byIds = (col: SQLWrapper, ids: readonly (string | number)[], ...rest: (SQL | undefined)[]): SQL => {
  const others = and(...rest);
  return others ? sql`(${inJsonList(col, ids)} AND +(${others}))` : inJsonList(col, ids);
};

/** `col NOT IN (values)`, the list bound as one JSON parameter (see inJsonList). */
export const notInJsonList = (col: SQLWrapper, values: readonly (string | number)[]): SQL =>
  sql`${col} NOT IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;

/** `MAX(col, value)`: SQLite's two-argument scalar max, for counters that only move up. */
export const maxOf = (col: AnyColumn, value: number): SQL<number> => sql<number>`MAX(${col}, ${value})`;

/** `MAX(COALESCE(col, 0), value)`. */
export const maxOfNullable = (col: AnyColumn, value: number): SQL<number> =>
  sql<number>`MAX(COALESCE(${col}, 0), ${value})`;

/** `json_extract(col, path)`: one field of a JSON text column. */
export const jsonField = (col: AnyColumn, path: string): SQL<unknown> => sql`json_extract(${col}, ${path})`;

/**
 * Rows (observation id, team, project, path, kind, blob, ws, base) for `observation_files`, one per element of
 * `files`, taken from the observation stored under (session, content hash). The files travel as ONE JSON
 * parameter, so an observation with many paths still binds three parameters; looking the id up by hash lets the
 * rows go in the same batch as the observation itself (and completes rows of an observation an earlier attempt
 * stored).
 */
export const observationFileRows = (
  sessionId: number | SQL<number>,
  contentHash: string,
  files: readonly {
    path: string;
    kind: 'read' | 'modified';
    blob?: string | null;
    ws?: string | null;
    base?: string | null;
  }[],
): SQL =>
  sql`SELECT ${observations.id}, ${observations.teamId}, ${observations.projectId}, json_extract(j.value, '$.path'), json_extract(j.value, '$.kind'),
             json_extract(j.value, '$.blob'), json_extract(j.value, '$.ws'), json_extract(j.value, '$.base')
        FROM ${observations}, json_each(${JSON.stringify(files)}) j
       WHERE ${observations.sessionId} = ${sessionId} AND ${observations.contentHash} = ${contentHash}`;

/** A one-row, one-column subquery used as a value: `(SELECT …)`. */
export const scalar = <T>(query: SQLWrapper): SQL<T> => sql<T>`(${query})`;

/** `group_concat(col, sep)` over a subquery's rows. */
export const groupConcat = (col: SQLWrapper, sep: string): SQL<string | null> =>
  sql<string | null>`group_concat(${col}, ${sep})`;

/** `x IS NULL` as a sortable value (SQLite sorts false before true): puts rows without a value last. */
export const nullsLast = (x: SQLWrapper): SQL => sql`${x} IS NULL`;

/** A JSON-array text column (`["a","b"]`) shares at least one element with `values`. */
export const jsonListIntersects = (col: AnyColumn, values: readonly string[]): SQL =>
  sql`EXISTS (SELECT 1 FROM json_each(${col}) c WHERE c.value IN (SELECT value FROM json_each(${JSON.stringify(values)})))`;

/**
 * Runs a drizzle SELECT with `INDEXED BY index` after its `FROM "table"` and answers rows keyed like `fields`
 * (whose key order is the SELECT's column order). Without statistics SQLite prefers the team-wide time index
 * even when one project is fixed (the visibility rule's `project_id IN (…)` hides that the project is
 * fixed), and drizzle has no builder for an index hint.
 */
export async function allIndexedBy<T extends Record<string, unknown>>(
  d: Db,
  query: { toSQL(): { sql: string; params: unknown[] } },
  fields: Record<keyof T, unknown>,
  table: string,
  index: string,
): Promise<T[]> {
  const q = query.toSQL();
  const from = `from "${table}"`;
  if (!q.sql.includes(from)) throw new Error(`allIndexedBy: no ${from} in the query`);
  const keys = Object.keys(fields) as (keyof T)[];
  const rows = await d.$client
    .prepare(q.sql.replace(from, `${from} INDEXED BY ${index}`))
    .bind(...q.params)
    .raw();
  return rows.map((r) => Object.fromEntries(keys.map((k, i) => [k, r[i]])) as T);
}

/** Approximate tokens (chars / 4) of an observation's text, computed in SQL for listings. */
export const observationTokens = (): SQL<number> =>
  sql<number>`CAST((length(coalesce(${observations.title}, '')) + length(coalesce(${observations.subtitle}, '')) + length(coalesce(${observations.narrative}, '')) + length(${observations.facts}) + 3) / 4 AS INTEGER)`;

/** `hex(col)`: BLOBs cross the D1 boundary as arrays of numbers, hex strings far cheaper. */
export const hexOf = (col: AnyColumn): SQL<string> => sql<string>`hex(${col})`;

/** `col` starts with `prefix + '.'` (a dotted name below `prefix`), compared exactly (no LIKE wildcards). */
export const startsWithDotted = (col: AnyColumn, prefix: string): SQL =>
  sql`substr(${col}, 1, ${prefix.length + 1}) = ${`${prefix}.`}`;

/** A comma-separated scope list (`ingest,read,admin`) holds `scope`. */
export const hasListItem = (col: AnyColumn, item: string): SQL => sql`',' || ${col} || ',' LIKE ${`%,${item},%`}`;

/** The comma-separated list in `col` without `item` (tidy commas, no empty items). */
export const withoutListItem = (col: AnyColumn, item: string): SQL<string> =>
  sql<string>`trim(replace(replace(replace(',' || ${col} || ',', ${`,${item},`}, ','), ',,', ','), ',,', ','), ',')`;

/**
 * The project a session's rows are filed under, read when they are stored: the session's project now (a merge
 * moves sessions, so events buffered before it, or replayed from a dead letter after it, follow), else `fallback`.
 */
export const projectAtStoreTime = (sessionId: number, fallback: number): SQL<number> =>
  sql<number>`(SELECT COALESCE((SELECT ${sessions.projectId} FROM ${sessions} WHERE ${sessions.id} = ${sessionId}), ${fallback}))`;

/** `projectId` if that project still exists, else the project its old `key` is now an alias of, else `projectId`. */
export const projectOrItsAlias = (teamId: number, projectId: number, key: string | null): SQL<number> =>
  sql<number>`COALESCE((SELECT ${projects.id} FROM ${projects} WHERE ${projects.id} = ${projectId}), (SELECT ${projectAliases.projectId} FROM ${projectAliases} WHERE ${projectAliases.teamId} = ${teamId} AND ${projectAliases.key} = ${key}), ${projectId})`;

/** The JSON array at `path` inside a JSON text column holds `value`. */
export const jsonArrayHas = (col: AnyColumn, path: string, value: string): SQL =>
  sql`EXISTS (SELECT 1 FROM json_each(${col}, ${path}) d WHERE d.value = ${value})`;

/**
 * An anomaly row's detail one occurrence later: `count` up by one, `last_at` set, and `sample` added to the
 * `devices` list while it holds fewer than `max` (a null sample leaves the list as it is).
 */
export const anomalyCounted = (detail: AnyColumn, at: number, sample: string | null, max: number): SQL<string> =>
  sql<string>`json_set(${detail},
           '$.count', COALESCE(json_extract(${detail}, '$.count'), 1) + 1,
           '$.last_at', ${at},
           '$.devices', CASE
             WHEN ${sample} IS NULL THEN json_extract(${detail}, '$.devices')
             WHEN json_array_length(COALESCE(json_extract(${detail}, '$.devices'), '[]')) >= ${max} THEN json_extract(${detail}, '$.devices')
             ELSE json_insert(COALESCE(json_extract(${detail}, '$.devices'), '[]'), '$[#]', ${sample}) END)`;

/** `col + by`: a counter moved in SQL, so concurrent writers never lose an increment. */
export const plus = (col: AnyColumn, by: number | SQL): SQL<number> => sql<number>`${col} + ${by}`;

/** `col + excluded.col`: in an upsert, the stored value plus the one the refused insert carried. */
/** In an upsert's DO UPDATE: the value the conflicting INSERT brought for `col`. */
export const excluded = (col: AnyColumn): SQL => sql`excluded.${sql.identifier(col.name)}`;

export const plusExcluded = (col: AnyColumn): SQL<number> => sql<number>`${col} + excluded.${sql.identifier(col.name)}`;

/** `COALESCE(SUM(a + b + …), 0)` over the rows, or only over those where `when` holds. */
export const totalOf = (cols: readonly AnyColumn[], when?: SQL): SQL<number> => {
  const added = sql.join(
    cols.map((c) => sql`${c}`),
    sql` + `,
  );
  return when
    ? sql<number>`COALESCE(SUM(CASE WHEN ${when} THEN ${added} END), 0)`
    : sql<number>`COALESCE(SUM(${added}), 0)`;
};

/** One local vector as `record_id:part:fingerprint` (db/vectors.ts reads 5,000 of them as one group_concat text). */
export const localVectorEntry = (): SQL<string> =>
  sql<string>`${localVectors.recordId} || ':' || ${localVectors.part} || ':' || ifnull(${localVectors.fingerprint}, '')`;

/**
 * The id of the team's project stored under `key`, looked up inside a batch that may have made it. With a
 * `writer`, only a project that user may write answers (team-visible or theirs; the write policy's
 * `mayWriteProject`): a key that changed hands since a part was planned gives NULL, which NOT NULL refuses.
 */
export const projectIdByKey = (teamId: number, key: string, writer: number | null): SQL<number> =>
  writer === null
    ? sql<number>`(SELECT ${projects.id} FROM ${projects} WHERE ${projects.teamId} = ${teamId} AND ${projects.key} = ${key})`
    : sql<number>`(SELECT ${projects.id} FROM ${projects} WHERE ${projects.teamId} = ${teamId} AND ${projects.key} = ${key} AND (${projects.visibility} = 'team' OR ${projects.ownerUserId} = ${writer}))`;

/**
 * The id of the team's session `key`, looked up inside a batch that may have made it. With a user, only that
 * user's imported session answers (the write policy's `mayImportIntoSession`), else NULL.
 */
export const sessionIdByKey = (teamId: number, key: string, userId: number | null): SQL<number> =>
  userId === null
    ? sql<number>`(SELECT ${sessions.id} FROM ${sessions} WHERE ${sessions.teamId} = ${teamId} AND ${sessions.sessionKey} = ${key})`
    : sql<number>`(SELECT ${sessions.id} FROM ${sessions} WHERE ${sessions.teamId} = ${teamId} AND ${sessions.sessionKey} = ${key} AND ${sessions.userId} = ${userId} AND ${sessions.importedAt} IS NOT NULL)`;

/** The project of the session `sessionId` (a value or a subquery), as a value. */
export const projectOfSession = (sessionId: number | SQL<number>): SQL<number> =>
  sql<number>`(SELECT ${sessions.projectId} FROM ${sessions} WHERE ${sessions.id} = ${sessionId})`;

/**
 * The database's size in bytes, as D1 reports it with every answer (`meta.size_after`): D1 refuses the PRAGMAs
 * that would tell it otherwise. One statement that reads nothing.
 */
export async function databaseBytes(d1: D1Database): Promise<number | null> {
  const r = await d1.prepare('SELECT 1').run();
  const size = (r.meta as { size_after?: unknown }).size_after;
  return typeof size === 'number' ? size : null;
}

/**
 * Rows for `observation_signals` in its column order (observation, team, fetched, useful, wrong, outdated, review,
 * updated, used): one fetch each of the team's observations among `ids`, for an upsert that counts them in one
 * statement.
 */
export const fetchedSignalRows = (teamId: number, ids: readonly number[], at: number): SQL =>
  sql`SELECT ${observations.id}, ${observations.teamId}, 1, 0, 0, 0, NULL, ${at}, 0 FROM ${observations}
       WHERE ${observations.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND +${observations.teamId} = ${teamId}`;

/** Rows for `observation_signals` in its column order: one use each of the team's observations among `ids` (a subquery). */
export const usedSignalRows = (teamId: number, ids: SQLWrapper, at: number): SQL =>
  sql`SELECT ${observations.id}, ${observations.teamId}, 0, 0, 0, 0, NULL, ${at}, 1 FROM ${observations}
       WHERE ${observations.id} IN (${ids}) AND +${observations.teamId} = ${teamId}`;

/**
 * One statement deleting at most `limit` of a team's rows of `table` (a team move empties a database a chunk at
 * a time; src/db/move.ts names the tables): `teams` goes by id, observer_usage (no rowid, no FTS) at once.
 */
export function teamChunkDelete(table: string, teamId: number, limit: number): SQL {
  if (table === 'teams') return sql`DELETE FROM teams WHERE id = ${teamId}`;
  if (table === 'observer_usage') return sql`DELETE FROM observer_usage WHERE team_id = ${teamId}`;
  const t = sql.raw(table);
  return sql`DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE team_id = ${teamId} LIMIT ${limit})`;
}

/** The first `chars` characters of the first non-empty text among `cols` (a JSON list's first item for `listCol`). */
export const prefixOfFirst = (chars: number, cols: AnyColumn[], listCol: AnyColumn): SQL<string | null> =>
  sql<string | null>`substr(coalesce(${sql.join(
    cols.map((c) => sql`nullif(${c}, '')`),
    sql`, `,
  )}, json_extract(${listCol}, '$[0]')), 1, ${Math.trunc(chars)})`;

/** `held` while `released` is NULL, else NULL: a row's held kinds for as long as it is held (src/db/held.ts). */
export const whileUnreleased = (held: AnyColumn, released: AnyColumn): SQL<string | null> =>
  sql<string | null>`CASE WHEN ${released} IS NULL THEN ${held} END`;
/** `json_group_array(col)`: a group's ids as one JSON list (consolidation's groups). */
/** A JSON list column as a set: its distinct items sorted, as a JSON array (`["a","b"]` for `["b","a","b"]`). */
export const jsonSetKey = (col: AnyColumn): SQL<string> =>
  sql<string>`(SELECT json_group_array(DISTINCT value ORDER BY value) FROM json_each(${col}))`;
export const jsonGroupIds = (col: AnyColumn): SQL<string> => sql<string>`json_group_array(${col})`;

/** `substr(a || ' ' || b …, 1, chars)` over nullable text columns: a bounded prefix of a record's words. */
export const joinedPrefix = (cols: AnyColumn[], chars: number): SQL<string> =>
  sql<string>`substr(${sql.join(
    cols.map((c) => sql`coalesce(${c}, '')`),
    sql` || ' ' || `,
  )}, 1, ${Math.trunc(chars)})`;

/**
 * Rows for `observation_events` in its column order (id, team, observation, action, by, actor user, actor, reason,
 * created, changes): one `action` event for each of the team's observations among `ids` whose merged_into is `mergedInto`
 * (null: none), so a merge or its undo is written in one statement whatever its size.
 */
export const mergeEventRows = (e: {
  teamId: number;
  ids: readonly number[];
  action: 'merge' | 'unmerge';
  by: number;
  mergedInto: number | null;
  actorUserId: number | null;
  reason: string;
  at: number;
}): SQL =>
  sql`SELECT NULL, ${observations.teamId}, ${observations.id}, ${e.action}, ${e.by}, ${e.actorUserId}, 'consolidation', ${e.reason}, ${e.at}, NULL FROM ${observations}
       WHERE ${observations.id} IN (SELECT value FROM json_each(${JSON.stringify(e.ids)})) AND +${observations.teamId} = ${e.teamId}
         AND ${e.mergedInto === null ? sql`${observations.mergedInto} IS NULL` : sql`${observations.mergedInto} = ${e.mergedInto}`}`;

/**
 * `proposals` rows (its column order) for a merge waiting for review: one per source among `ids` that is still
 * mergeable (current, not merged, not forgotten) and is not `survivor`. One statement whatever the cluster.
 */
export const mergeProposalRows = (p: {
  teamId: number;
  survivor: number;
  ids: readonly number[];
  reason: string;
  actorUserId: number | null;
  at: number;
}): SQL =>
  sql`SELECT NULL, ${observations.teamId}, 'merge', ${observations.id}, ${p.survivor}, ${p.reason}, 'consolidation', ${p.actorUserId}, ${p.at} FROM ${observations}
       WHERE ${observations.id} IN (SELECT value FROM json_each(${JSON.stringify(p.ids)})) AND +${observations.teamId} = ${p.teamId}
         AND ${observations.id} <> ${p.survivor} AND ${observations.mergedInto} IS NULL AND ${observations.supersededBy} IS NULL
         AND ${observations.deletedAt} IS NULL`;

/**
 * `release` event rows (observation_events column order) for the team's observations among `ids` still held and
 * not released: a release is a version of each record it lets out (src/db/held.ts, in the release's batch).
 */
export const releaseEventRows = (e: { teamId: number; ids: readonly number[]; actorUserId: number; at: number }): SQL =>
  sql`SELECT NULL, ${observations.teamId}, ${observations.id}, 'release', NULL, ${e.actorUserId}, 'user', NULL, ${e.at}, NULL FROM ${observations}
       WHERE ${observations.id} IN (SELECT value FROM json_each(${JSON.stringify(e.ids)})) AND +${observations.teamId} = ${e.teamId}
         AND ${observations.heldKinds} IS NOT NULL AND ${observations.releasedAt} IS NULL AND ${observations.deletedAt} IS NULL`;

/**
 * `unmerge` event rows (observation_events column order) for the team's observations merged into one of
 * `survivors` and created at or after `since`: the sources a retention sweep puts back when the records that
 * stood for them expire (src/db/retention.ts). One statement whatever the chunk; `merged_into IS NOT NULL` lets
 * it use the partial index idx_obs_merged.
 */
export const restoreEventRows = (e: {
  teamId: number;
  survivors: readonly number[];
  since: number;
  reason: string;
  at: number;
}): SQL =>
  sql`SELECT NULL, ${observations.teamId}, ${observations.id}, 'unmerge', ${observations.mergedInto}, NULL, 'retention', ${e.reason}, ${e.at}, NULL FROM ${observations}
       WHERE ${observations.teamId} = ${e.teamId} AND ${observations.mergedInto} IS NOT NULL
         AND ${observations.mergedInto} IN (SELECT value FROM json_each(${JSON.stringify(e.survivors)}))
         AND +${observations.createdAt} >= ${e.since}`;

/** `+(cond)`: the condition as written, kept from choosing an index (SQLite's unary `+`, see byIds). */
export const unindexed = (cond: SQL | undefined): SQL => sql`+(${cond})`;
/** `COALESCE(a, b)`. */
export const coalesce = <T>(a: SQLWrapper, b: SQLWrapper): SQL<T> => sql<T>`COALESCE(${a}, ${b})`;

/** A one-row subquery's value as the row `id` of a SELECT that answers no row when it is NULL. */
const oneId = (id: SQL<number | null>): SQL => sql`(SELECT ${id} AS id) o`;

/**
 * Rows for observation_events (an import's history line, src/transfer/history.ts): `count` copies of one event
 * of the observation `observation` names (a one-row subquery; no row when it names none), less the identical rows
 * the observation has already, so the same line imported again adds nothing.
 */
export const eventCopies = (e: {
  teamId: number;
  observation: SQL<number | null>;
  action: string;
  by: SQL<number | null> | null;
  actorUserId: number | null;
  actor: string;
  reason: string | null;
  at: number;
  count: number;
  /** What the act changed in the record's text (JSON), null for acts on its state. */
  changes: string | null;
}): SQL => {
  const ev = observationEvents;
  const copies = JSON.stringify(Array.from({ length: e.count }, (_, i) => i));
  return sql`SELECT NULL, ${e.teamId}, o.id, ${e.action}, ${e.by}, ${e.actorUserId}, ${e.actor}, ${e.reason}, ${e.at}, ${e.changes}
        FROM ${oneId(e.observation)}, json_each(${copies}) j
       WHERE o.id IS NOT NULL AND j.value >= (SELECT COUNT(*) FROM ${ev} WHERE ${ev.observationId} = o.id
         AND ${ev.action} = ${e.action} AND ${ev.byObservationId} IS ${e.by} AND ${ev.actorUserId} IS ${e.actorUserId}
         AND ${ev.actor} = ${e.actor} AND ${ev.reason} IS ${e.reason} AND ${ev.createdAt} = ${e.at}
         AND ${ev.changes} IS ${e.changes})`;
};

/**
 * One observation_events row (its column order) for the team's observation `e.id`, only while `when` holds of the
 * row (a version written in the same batch as the update it records, conditional on the text it found: a
 * concurrent edit makes both write nothing, src/versions/queries.ts).
 */
export const versionEventRow = (
  e: {
    teamId: number;
    id: number;
    action: string;
    by: number | null;
    actorUserId: number | null;
    actor: string;
    reason: string | null;
    at: number;
    changes: string | null;
  },
  when: SQL | undefined,
): SQL =>
  sql`SELECT NULL, ${observations.teamId}, ${observations.id}, ${e.action}, ${e.by}, ${e.actorUserId}, ${e.actor}, ${e.reason}, ${e.at}, ${e.changes}
        FROM ${observations} WHERE ${observations.id} = ${e.id} AND ${observations.teamId} = ${e.teamId}${when ? sql` AND ${when}` : sql``}`;

/** A row for observation_signals with these counts, for the observation `observation` names (none if none). */
export const signalCopy = (
  teamId: number,
  observation: SQL<number | null>,
  v: {
    fetched: number;
    useful: number;
    wrong: number;
    outdated: number;
    review: string | null;
    updatedAt: number;
    used?: number;
  },
): SQL =>
  sql`SELECT o.id, ${teamId}, ${v.fetched}, ${v.useful}, ${v.wrong}, ${v.outdated}, ${v.review}, ${v.updatedAt}, ${v.used ?? 0}
        FROM ${oneId(observation)} WHERE o.id IS NOT NULL`;

/**
 * `json_object('k', (subquery or value), …)`: a JSON object whose numbers are counted by subqueries when the
 * statement runs (a chunk mark written in the same batch as the deletes it counts).
 */
export const jsonCounts = (entries: Record<string, SQLWrapper | number>): SQL<string> =>
  sql<string>`json_object(${sql.join(
    Object.entries(entries).map(([k, v]) => (typeof v === 'number' ? sql`${k}, ${v}` : sql`${k}, (${v})`)),
    sql`, `,
  )})`;

/** A bound value as a selected column (an insert…select's constant, e.g. its time). */
export const boundValue = <T extends number | string>(v: T): SQL<T> => sql<T>`${v}`;

/** A table's rowid as a column, for paging a table that has no id column of its own (prime_tombstones). */
export const rowidOf = (table: SQLWrapper): SQL<number> => sql<number>`${table}.rowid`;

/**
 * `col < n` with n written into the statement, not bound: SQLite uses a partial index only when it can prove the
 * query's WHERE implies the index's, and with a constant that never depends on how a parameter is bound (the
 * unembedded indexes name `embed_failures < 3`).
 */
export const belowLiteral = (col: AnyColumn, n: number): SQL => sql`${col} < ${sql.raw(String(Math.trunc(n)))}`;

/** `col >= n` with n written into the statement (see belowLiteral). */
export const atLeastLiteral = (col: AnyColumn, n: number): SQL => sql`${col} >= ${sql.raw(String(Math.trunc(n)))}`;
/** `json_patch(col, patch)`: a JSON-object column with `patch`'s keys set (RFC 7396 merge), bound as ONE parameter. */
export const jsonPatch = (col: AnyColumn, patch: Readonly<Record<string, unknown>>): SQL<string> =>
  sql<string>`json_patch(${col}, ${JSON.stringify(patch)})`;

/** `col + 1` while `key` still holds `value`, else 1: a count of attempts that starts again with a new key. */
export const countWhileSame = (col: AnyColumn, key: AnyColumn, value: string): SQL<number> =>
  sql<number>`CASE WHEN ${key} = ${value} THEN ${col} + 1 ELSE 1 END`;

/** The column's value, or `value` when it is NULL (keeps the first time something happened). */
export const firstOf = (col: AnyColumn, value: number): SQL<number> => sql<number>`COALESCE(${col}, ${value})`;
/**
 * Rows for `receipts` in its column order (id, team, session, project, user, device, observation, channels,
 * evidence, reasons, sent, first, last, used): one per `[id, evidence, reasons]` of `items` (one JSON parameter)
 * that is an observation of the team. For the one receipts insert (db/receipts.ts).
 */
export const receiptRows = (
  r: { teamId: number; sessionKey: string; projectId: number; userId: number; deviceId: number; channels: number },
  items: readonly (readonly [number, string, string])[],
  at: number,
): SQL =>
  sql`SELECT NULL, ${r.teamId}, ${r.sessionKey}, ${r.projectId}, ${r.userId}, ${r.deviceId}, ${observations.id},
        ${r.channels}, json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), 1, ${at}, ${at}, NULL
       FROM json_each(${JSON.stringify(items)}) j JOIN ${observations}
         ON ${observations.id} = json_extract(j.value, '$[0]') AND +${observations.teamId} = ${r.teamId}
      WHERE 1`;

/** A session's start mark for `receipts` (no observation), in its column order, unless the session has one. */
export const receiptStartRow = (
  r: { teamId: number; sessionKey: string; projectId: number; userId: number; deviceId: number },
  at: number,
  exists: SQLWrapper,
): SQL =>
  sql`SELECT NULL, ${r.teamId}, ${r.sessionKey}, ${r.projectId}, ${r.userId}, ${r.deviceId}, NULL, 0, 'unknown', '', 1,
        ${at}, ${at}, NULL WHERE NOT EXISTS ${exists}`;

/** `col | excluded.col`: in an upsert, the stored bits and the ones the refused insert carried. */
export const orExcluded = (col: AnyColumn): SQL<number> => sql<number>`${col} | excluded.${sql.identifier(col.name)}`;

/** `(col & mask) != 0`: any of the bits of `mask` set. */
export const anyBit = (col: AnyColumn, mask: number): SQL => sql`(${col} & ${Math.trunc(mask)}) != 0`;

/** How many rows of a group have `col` among `values` (0 for none), the values bound as one JSON parameter. */
export const countIn = (col: AnyColumn, values: readonly string[]): SQL<number> =>
  sql<number>`coalesce(sum(${inJsonList(col, values)}), 0)`;
