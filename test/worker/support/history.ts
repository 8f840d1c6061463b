// A project with every kind of correction history, made through the routes (supersede, feedback) and the
// consolidation's merge, and what a reader sees of it (context index and search), for the tests that carry the
// history to another team or deployment (export → import, backup → restore).
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { mergeRows } from '../../../src/db/consolidation';
import { call } from './http';
import type { SeedWorld } from './seed';
import { comparableContext } from './comparable';

const T0 = Date.parse('2026-05-04T09:00:00Z');

export interface Corrected {
  word: string;
  titles: { old: string; fix: string; dup: string; flagged: string; alone: string; plain: string };
}

/** Six records of `w`: one superseded by another, one merged into it, one flagged wrong, one outdated alone. */
export async function seedCorrections(w: SeedWorld): Promise<Corrected> {
  const word = `hist${Math.random().toString(36).slice(2, 8)}`;
  const titles = {
    old: `The ${word} cache key was only the path`,
    fix: `The ${word} cache key is the path and the locale`,
    dup: `The ${word} cache key holds the locale too`,
    flagged: `The ${word} cache never expires`,
    alone: `The ${word} cache lives in KV`,
    plain: `The ${word} cache is warmed at deploy`,
  };
  const ids: Record<string, number> = {};
  let i = 0;
  for (const [k, title] of Object.entries(titles))
    ids[k] = await w.add({ type: 'discovery', title, narrative: `${title}.`, createdAt: T0 + 1_000 * i++ });
  const post = async (path: string, json: unknown) => {
    const res = await call(path, { token: w.id.token, json });
    expect(res.status, `${path} ${await res.clone().text()}`).toBe(200);
  };
  await post('/api/corrections/supersede', { id: ids.old, by: ids.fix, reason: 'the locale was missing' });
  await post('/api/corrections/supersede', { id: ids.alone, reason: 'moved to D1' });
  await post('/api/corrections/feedback', { id: ids.flagged, kind: 'wrong', reason: 'it expires after a day' });
  await post('/api/corrections/feedback', { id: ids.fix, kind: 'useful' });
  await mergeRows(env.DB, {
    teamId: w.ids.teamId,
    survivor: ids.fix!,
    sources: [ids.dup!],
    similarity: 0.97,
    actorUserId: null,
    at: T0 + 10_000,
  });
  return { word, titles };
}

/** What `token` reads of project `key`: its context index and the titles a search for `word` finds. */
export async function truthOf(token: string, key: string, word: string) {
  const context = comparableContext(
    await (await call(`/api/context?project=${encodeURIComponent(key)}&tz=UTC`, { token })).text(),
  );
  const res = await call(`/api/search?q=${encodeURIComponent(word)}&project=${encodeURIComponent(key)}`, { token });
  const search = ((await res.json()) as { results: { title: string }[] }).results.map((r) => r.title).sort();
  return { context, search };
}

/** The source's truth: the replacement and the untouched record, nothing superseded, merged or flagged. */
export function expectCorrected(t: { context: string; search: string[] }, c: Corrected): void {
  expect(t.context).toContain(c.titles.fix);
  expect(t.context).toContain(c.titles.plain);
  for (const gone of [c.titles.old, c.titles.dup, c.titles.flagged, c.titles.alone])
    expect(t.context, gone).not.toContain(gone);
  expect(t.search).toContain(c.titles.fix);
  expect(t.search).not.toContain(c.titles.dup);
}

/** The history rows of a team's observations, by title, ids replaced by titles (comparable across teams). */
export async function historyOf(d1: D1Database, teamId: number) {
  const titles = new Map(
    (
      await d1
        .prepare('SELECT id, title FROM observations WHERE team_id = ?')
        .bind(teamId)
        .all<{ id: number; title: string }>()
    ).results.map((r) => [r.id, r.title]),
  );
  const t = (id: number | null) => (id === null ? null : (titles.get(id) ?? `?${id}`));
  const links = (
    await d1
      .prepare(
        'SELECT id, superseded_by, merged_into FROM observations WHERE team_id = ? AND (superseded_by IS NOT NULL OR merged_into IS NOT NULL)',
      )
      .bind(teamId)
      .all<{ id: number; superseded_by: number | null; merged_into: number | null }>()
  ).results
    .map((r) => ({ of: t(r.id), superseded_by: t(r.superseded_by), merged_into: t(r.merged_into) }))
    .sort((a, b) => String(a.of).localeCompare(String(b.of)));
  const events = (
    await d1
      .prepare(
        'SELECT observation_id, action, by_observation_id, actor, reason, created_at FROM observation_events WHERE team_id = ?',
      )
      .bind(teamId)
      .all<{
        observation_id: number;
        action: string;
        by_observation_id: number | null;
        actor: string;
        reason: string | null;
        created_at: number;
      }>()
  ).results
    .map((r) => ({ ...r, observation_id: t(r.observation_id), by_observation_id: t(r.by_observation_id) }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const signals = (
    await d1
      .prepare(
        'SELECT observation_id, fetched, useful, wrong, outdated, review FROM observation_signals WHERE team_id = ?',
      )
      .bind(teamId)
      .all<{ observation_id: number }>()
  ).results
    .map((r) => ({ ...r, observation_id: t(r.observation_id) }))
    .sort((a, b) => String(a.observation_id).localeCompare(String(b.observation_id)));
  return { links, events, signals };
}
