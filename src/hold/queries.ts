// The hold-back's backfill queries (src/hold/backfill-job.ts): rows stored before migration 0017 were never judged
// for instruction-like text. A page of a kind's unjudged-looking rows (held_kinds NULL, never released) by id,
// judged here with the same rule as the write path (held.ts heldKindsOf), and the held ones marked.
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import { db as dbOf, type Db } from '../db/client';
import { heldKindsOf, type HeldKind } from '../db/held';
import { observations, prompts, summaries } from '../db/schema';

const list = (json: string | null): string[] => {
  try {
    const v: unknown = JSON.parse(json ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
};

/** The texts each kind is judged on, as its insert path judges them. */
async function page(
  d: Db,
  kind: HeldKind,
  teamId: number,
  after: number,
  limit: number,
): Promise<{ id: number; parts: (string | null)[] }[]> {
  if (kind === 'observation') {
    const o = observations;
    const rows = await d
      .select({
        id: o.id,
        title: o.title,
        subtitle: o.subtitle,
        narrative: o.narrative,
        facts: o.facts,
        concepts: o.concepts,
        read: o.filesRead,
        modified: o.filesModified,
      })
      .from(o)
      .where(and(eq(o.teamId, teamId), gt(o.id, after), isNull(o.heldKinds), isNull(o.releasedAt)))
      .orderBy(asc(o.id))
      .limit(limit);
    return rows.map((r) => ({
      id: r.id,
      parts: [
        r.title,
        r.subtitle,
        r.narrative,
        ...list(r.facts),
        ...list(r.concepts),
        ...list(r.read),
        ...list(r.modified),
      ],
    }));
  }
  if (kind === 'summary') {
    const s = summaries;
    const rows = await d
      .select({
        id: s.id,
        request: s.request,
        investigated: s.investigated,
        learned: s.learned,
        completed: s.completed,
        next: s.nextSteps,
        notes: s.notes,
      })
      .from(s)
      .where(and(eq(s.teamId, teamId), gt(s.id, after), isNull(s.heldKinds), isNull(s.releasedAt)))
      .orderBy(asc(s.id))
      .limit(limit);
    return rows.map((r) => ({ id: r.id, parts: [r.request, r.investigated, r.learned, r.completed, r.next, r.notes] }));
  }
  const p = prompts;
  const rows = await d
    .select({ id: p.id, text: p.text })
    .from(p)
    .where(and(eq(p.teamId, teamId), gt(p.id, after), isNull(p.heldKinds), isNull(p.releasedAt)))
    .orderBy(asc(p.id))
    .limit(limit);
  return rows.map((r) => ({ id: r.id, parts: [r.text] }));
}

const TABLES = { observation: observations, summary: summaries, prompt: prompts } as const;

/**
 * Judges up to `limit` rows of `kind` past `after` and marks the held ones (one read, one batch of updates).
 * Answers the last id read (null when none was left) and how many were held. A row judged clean stays as it was.
 */
export async function judgePage(
  d1: D1Database | Db,
  kind: HeldKind,
  teamId: number,
  after: number,
  limit: number,
): Promise<{ last: number | null; read: number; held: number }> {
  const d = dbOf(d1);
  const rows = await page(d, kind, teamId, after, limit);
  if (!rows.length) return { last: null, read: 0, held: 0 };
  const t = TABLES[kind];
  const updates = rows
    .map((r) => ({ id: r.id, kinds: heldKindsOf(r.parts) }))
    .filter((r): r is { id: number; kinds: string } => r.kinds !== null)
    .map((r) =>
      d
        .update(t)
        .set({ heldKinds: r.kinds })
        .where(and(eq(t.teamId, teamId), eq(t.id, r.id), isNull(t.heldKinds), isNull(t.releasedAt))),
    );
  if (updates.length) await d.batch(updates as unknown as Parameters<typeof d.batch>[0]);
  return { last: rows[rows.length - 1]!.id, read: rows.length, held: updates.length };
}
