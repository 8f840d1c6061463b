// What a page of a team move's change log names, read on either database (src/transfer/move-delta-page.ts): the
// rows by id as they are now, keys to ids (the target knows rows only by their keys), what records need beside
// them, the rows of the tables named by owner or key; and what the target holds at the end (the job's counts).
import { and, count, eq } from 'drizzle-orm';
import { db } from '../../db/client';
import {
  observationSignals,
  observations,
  observerUsage,
  primeTombstones,
  projectAliases,
  projects,
  prompts,
  sessions,
  summaries,
  users,
} from '../../db/schema';
import { inJsonList } from '../../db/sqlite';

export type ProjectRowFull = typeof projects.$inferSelect;
export type SessionRowFull = typeof sessions.$inferSelect;
export type PromptRowFull = typeof prompts.$inferSelect;
export type ObservationRowFull = typeof observations.$inferSelect;
export type SummaryRowFull = typeof summaries.$inferSelect;

/** A record's keys on any database: its session's key and its content hash (prompts: its number). */
export interface RecordKey {
  id: number;
  sessionKey: string;
  key: string;
}

const ids = (list: readonly number[]) => (list.length ? list : [-1]);
const keys = (list: readonly string[]) => (list.length ? list : ['']);

/** The rows the page's entries name by id, as they are now (a row deleted since is absent). */
export async function rowsByIds(
  d1: D1Database,
  teamId: number,
  want: { projects: number[]; sessions: number[]; prompts: number[]; observations: number[]; summaries: number[] },
) {
  const d = db(d1);
  const [p, s, pr, o, su] = await d.batch([
    d
      .select()
      .from(projects)
      .where(and(eq(projects.teamId, teamId), inJsonList(projects.id, ids(want.projects)))),
    d
      .select()
      .from(sessions)
      .where(and(eq(sessions.teamId, teamId), inJsonList(sessions.id, ids(want.sessions)))),
    d
      .select()
      .from(prompts)
      .where(and(eq(prompts.teamId, teamId), inJsonList(prompts.id, ids(want.prompts)))),
    d
      .select()
      .from(observations)
      .where(and(eq(observations.teamId, teamId), inJsonList(observations.id, ids(want.observations)))),
    d
      .select()
      .from(summaries)
      .where(and(eq(summaries.teamId, teamId), inJsonList(summaries.id, ids(want.summaries)))),
  ]);
  return { projects: p, sessions: s, prompts: pr, observations: o, summaries: su };
}

/** Keys → ids of the team's projects, sessions and records on `d` (`records` by session key and key). */
export async function idsByKeys(
  d1: D1Database,
  teamId: number,
  want: {
    projects: string[];
    sessions: string[];
    prompts: { sessionKey: string; key: string }[];
    observations: { sessionKey: string; key: string }[];
    summaries: { sessionKey: string; key: string }[];
  },
) {
  const d = db(d1);
  const sessionKeys = (list: { sessionKey: string }[]) => keys([...new Set(list.map((r) => r.sessionKey))]);
  const recordKeys = (list: { key: string }[]) => keys([...new Set(list.map((r) => r.key))]);
  const [p, s, pr, o, su] = await d.batch([
    d
      .select({ id: projects.id, key: projects.key })
      .from(projects)
      .where(and(eq(projects.teamId, teamId), inJsonList(projects.key, keys(want.projects)))),
    d
      .select({ id: sessions.id, key: sessions.sessionKey })
      .from(sessions)
      .where(and(eq(sessions.teamId, teamId), inJsonList(sessions.sessionKey, keys(want.sessions)))),
    d
      .select({ id: prompts.id, sessionKey: sessions.sessionKey, n: prompts.promptNumber })
      .from(prompts)
      .innerJoin(sessions, eq(sessions.id, prompts.sessionId))
      .where(
        and(
          eq(sessions.teamId, teamId),
          inJsonList(sessions.sessionKey, sessionKeys(want.prompts)),
          inJsonList(prompts.promptNumber, recordKeys(want.prompts)),
        ),
      ),
    d
      .select({ id: observations.id, sessionKey: sessions.sessionKey, key: observations.contentHash })
      .from(observations)
      .innerJoin(sessions, eq(sessions.id, observations.sessionId))
      .where(
        and(
          eq(sessions.teamId, teamId),
          inJsonList(sessions.sessionKey, sessionKeys(want.observations)),
          inJsonList(observations.contentHash, recordKeys(want.observations)),
        ),
      ),
    d
      .select({ id: summaries.id, sessionKey: sessions.sessionKey, key: summaries.contentHash })
      .from(summaries)
      .innerJoin(sessions, eq(sessions.id, summaries.sessionId))
      .where(
        and(
          eq(sessions.teamId, teamId),
          inJsonList(sessions.sessionKey, sessionKeys(want.summaries)),
          inJsonList(summaries.contentHash, recordKeys(want.summaries)),
        ),
      ),
  ]);
  // The key lists are matched separately: keep only the pairs asked for.
  const pairs = (list: { sessionKey: string; key: string }[]) =>
    new Set(list.map((r) => `${r.sessionKey}\u0000${r.key}`));
  const keep = <R extends { sessionKey: string; key: string }>(rows: R[], asked: Set<string>) =>
    new Map(
      rows.filter((r) => asked.has(`${r.sessionKey}\u0000${r.key}`)).map((r) => [`${r.sessionKey}\u0000${r.key}`, r]),
    );
  return {
    projects: new Map(p.map((r) => [r.key, r.id])),
    sessions: new Map(s.map((r) => [r.key, r.id])),
    prompts: keep(
      pr.map((r) => ({ id: r.id, sessionKey: r.sessionKey, key: String(r.n) })),
      pairs(want.prompts),
    ),
    observations: keep(o, pairs(want.observations)),
    summaries: keep(su, pairs(want.summaries)),
  };
}

/** What a page's records need beside them: their sessions and projects, the records their links name. */
export async function supportRows(
  d1: D1Database,
  teamId: number,
  want: { sessions: number[]; projects: number[]; observations: number[] },
) {
  const d = db(d1);
  const [s, p, o] = await d.batch([
    d
      .select()
      .from(sessions)
      .where(and(eq(sessions.teamId, teamId), inJsonList(sessions.id, ids(want.sessions)))),
    d
      .select()
      .from(projects)
      .where(and(eq(projects.teamId, teamId), inJsonList(projects.id, ids(want.projects)))),
    d
      .select({ id: observations.id, sessionKey: sessions.sessionKey, key: observations.contentHash })
      .from(observations)
      .innerJoin(sessions, eq(sessions.id, observations.sessionId))
      .where(and(eq(observations.teamId, teamId), inJsonList(observations.id, ids(want.observations)))),
  ]);
  return { sessions: s, projects: p, links: o };
}

/** The team's projects among `list` (a page's sessions whose project the first reads did not bring). */
export async function projectsByIds(d1: D1Database, teamId: number, list: number[]) {
  return db(d1)
    .select()
    .from(projects)
    .where(and(eq(projects.teamId, teamId), inJsonList(projects.id, ids(list))));
}

/** The rows of the tables a page names by key or owner: signals, usage, aliases, tombstones, as they are now. */
export async function extraRows(
  d1: D1Database,
  teamId: number,
  want: { signals: number[]; usage: number[]; aliases: string[]; tombstones: { projectId: number; hash: string }[] },
) {
  const d = db(d1);
  const [sig, use, al, tomb] = await d.batch([
    d
      .select()
      .from(observationSignals)
      .where(
        and(eq(observationSignals.teamId, teamId), inJsonList(observationSignals.observationId, ids(want.signals))),
      ),
    d
      .select()
      .from(observerUsage)
      .where(and(eq(observerUsage.teamId, teamId), inJsonList(observerUsage.sessionId, ids(want.usage)))),
    d
      .select()
      .from(projectAliases)
      .where(and(eq(projectAliases.teamId, teamId), inJsonList(projectAliases.key, keys(want.aliases)))),
    d
      .select()
      .from(primeTombstones)
      .where(
        and(
          eq(primeTombstones.teamId, teamId),
          inJsonList(primeTombstones.projectId, ids([...new Set(want.tombstones.map((t) => t.projectId))])),
          inJsonList(primeTombstones.hash, keys([...new Set(want.tombstones.map((t) => t.hash))])),
        ),
      ),
  ]);
  const asked = new Set(want.tombstones.map((t) => `${t.projectId}\u0000${t.hash}`));
  return {
    signals: sig,
    usage: use,
    aliases: al,
    tombstones: tomb.filter((t) => asked.has(`${t.projectId}\u0000${t.hash}`)),
  };
}

/** How many of the team's members, projects, sessions and records `d1` holds (what a move reports it carried). */
export async function teamRecordCounts(d1: D1Database, teamId: number) {
  const d = db(d1);
  const of = (t: typeof projects | typeof sessions | typeof prompts | typeof observations | typeof summaries) =>
    d.select({ n: count() }).from(t).where(eq(t.teamId, teamId));
  const [u, p, s, pr, o, su] = await d.batch([
    d.select({ n: count() }).from(users).where(eq(users.teamId, teamId)),
    of(projects),
    of(sessions),
    of(prompts),
    of(observations),
    of(summaries),
  ]);
  const n = (r: { n: number }[]) => r[0]?.n ?? 0;
  return { users: n(u), projects: n(p), sessions: n(s), prompts: n(pr), observations: n(o), summaries: n(su) };
}
