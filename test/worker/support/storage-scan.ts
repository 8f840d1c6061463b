// Privacy is a property of storage: these read D1 (every table and column, the FTS indexes) and a session's
// Durable Object for a word, so forget tests check what is stored rather than what the API answers.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { sessionStub } from '../pipeline/support';
import { settleFtsUpkeep } from './jobs';

// Ends in a digit so FTS5's porter stemmer leaves the tail the storage scan looks for as it was written.
export const secretWord = () => `qzx${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}7`;
/** FTS5 segment blobs store terms prefix-compressed against their neighbours: only a word's tail (here its
 * random part) is sure to be stored contiguously, so storage is scanned for that. */
const tail = (word: string) => word.slice(-7);

/** Every user table and column of a D1 database (FTS shadow tables included; `DB` unless named) whose text contains `word`. */
export async function d1Holding(word: string, d: D1Database = env.DB): Promise<string[]> {
  const tables = await d
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
    )
    .all<{ name: string }>();
  const hits: string[] = [];
  for (const { name } of tables.results) {
    if (/_fts$/.test(name)) continue; // the virtual tables read their content tables, scanned on their own
    const cols = await d.prepare('SELECT name FROM pragma_table_info(?)').bind(name).all<{ name: string }>();
    for (const { name: col } of cols.results) {
      const row = await d
        .prepare(`SELECT COUNT(*) AS n FROM "${name}" WHERE instr(lower(CAST("${col}" AS TEXT)), ?) > 0`)
        .bind(tail(word))
        .first<{ n: number }>();
      if ((row?.n ?? 0) > 0) hits.push(`${name}.${col}`);
    }
  }
  for (const fts of ['observations_fts', 'summaries_fts', 'prompts_fts']) {
    const row = await d
      .prepare(`SELECT COUNT(*) AS n FROM ${fts} WHERE ${fts} MATCH ?`)
      .bind(`"${word}"`)
      .first<{ n: number }>();
    if ((row?.n ?? 0) > 0) hits.push(`${fts} MATCH`);
  }
  return hits;
}

/**
 * The forget promise (docs/contracts.md): the row and every table at once; the index segments within the upkeep
 * cycle the forget asked for (run here instead of waiting for its alarm).
 */
export async function expectForgotten(word: string): Promise<void> {
  expect((await d1Holding(word)).filter((h) => !h.endsWith('_fts_data.block'))).toEqual([]);
  const cycles = await settleFtsUpkeep();
  expect(await d1Holding(word), JSON.stringify(cycles)).toEqual([]);
}

/** Tables of the session's Durable Object whose rows contain `word`. */
export async function objectHolding(teamId: number, sid: string, word: string): Promise<string[]> {
  return runInDurableObject(sessionStub(teamId, sid), (_i, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .toArray();
    const hits: string[] = [];
    for (const { name } of tables) {
      for (const { name: col } of sql.exec<{ name: string }>('SELECT name FROM pragma_table_info(?)', name).toArray()) {
        if (
          sql
            .exec<{ n: number }>(
              `SELECT COUNT(*) AS n FROM "${name}" WHERE instr(lower(CAST("${col}" AS TEXT)), ?) > 0`,
              word,
            )
            .one().n > 0
        )
          hits.push(`${name}.${col}`);
      }
    }
    return hits;
  });
}
