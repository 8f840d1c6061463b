// The hold-back in D1. At the door: every insert path (observations, summaries, prompts) stores with the row the
// kinds of instruction-like text it carries (src/shared/instructions.ts), judged on the redacted text as stored;
// the visibility rule (visibility.ts) keeps a held row from everyone but its author and admins until released.
// Here too: the admins' queue of held rows and their release (audited).
import { and, desc, eq, isNotNull, isNull } from 'drizzle-orm';
import { classifyInstructions, recordText } from '#shared/instructions';
import { insertAudit } from './audit';
import { db as dbOf, type Db } from './client';
import { observations, projects, prompts, summaries, users } from './schema';
import { insertEventRows } from './corrections';
import { byIds, releaseEventRows } from './sqlite';

/** `held_kinds` for a row whose texts are `parts`: the kinds joined by commas, or null when nothing was flagged. Pure, linear. */
export function heldKindsOf(parts: readonly (string | null | undefined)[]): string | null {
  const v = classifyInstructions(recordText(parts));
  return v.flagged ? v.kinds.join(',') : null;
}

export type HeldKind = 'observation' | 'summary' | 'prompt';
export const HELD_KINDS: readonly HeldKind[] = ['observation', 'summary', 'prompt'];
const TABLES = { observation: observations, summary: summaries, prompt: prompts } as const;
/** The text the queue shows of each kind: its title, its request, its text. */
const TITLES = { observation: observations.title, summary: summaries.request, prompt: prompts.text } as const;

/** Ids of each kind of record. */
export type HeldIds = Record<HeldKind, number[]>;

export interface HeldRow {
  kind: HeldKind;
  id: number;
  /** The record's first words as stored (the viewer and the CLI fence them when they show them). */
  title: string | null;
  project: string;
  author: string;
  createdAt: number;
  heldKinds: string;
}

const TITLE_MAX = 300;

/** Unreleased held rows of a team, newest first, at most `limit` of each kind (partial indexes: costs what it holds). */
export async function heldQueue(d1: D1Database | Db, teamId: number, limit: number): Promise<HeldRow[]> {
  const d = dbOf(d1);
  const of = (kind: HeldKind) => {
    const t = TABLES[kind];
    return d
      .select({
        id: t.id,
        title: TITLES[kind],
        project: projects.key,
        author: users.handle,
        createdAt: t.createdAt,
        heldKinds: t.heldKinds,
      })
      .from(t)
      .innerJoin(projects, eq(projects.id, t.projectId))
      .innerJoin(users, eq(users.id, t.authorUserId))
      .where(
        and(
          eq(t.teamId, teamId),
          isNotNull(t.heldKinds),
          isNull(t.releasedAt),
          'deletedAt' in t ? isNull(t.deletedAt) : undefined,
        ),
      )
      .orderBy(desc(t.id))
      .limit(limit);
  };
  const rows = await d.batch([of('observation'), of('summary'), of('prompt')]);
  return HELD_KINDS.flatMap((kind, i) =>
    rows[i]!.map(
      (r): HeldRow => ({
        kind,
        ...r,
        title: r.title === null ? null : r.title.slice(0, TITLE_MAX),
        heldKinds: r.heldKinds ?? '',
      }),
    ),
  ).sort((a, b) => b.createdAt - a.createdAt);
}

/**
 * Releases held rows of a team (only rows held and not yet released; deleted rows stay as they are), then writes
 * one audit row naming the ids that were released. Answers those ids.
 */
export async function releaseHeld(
  d1: D1Database | Db,
  a: { teamId: number; ids: HeldIds; actorUserId: number; at: number },
): Promise<HeldIds> {
  const d = dbOf(d1);
  const release = (kind: HeldKind) => {
    const t = TABLES[kind];
    const ids = a.ids[kind].length ? a.ids[kind] : [-1];
    return d
      .update(t)
      .set({ releasedAt: a.at, releasedBy: a.actorUserId })
      .where(
        byIds(
          t.id,
          ids,
          eq(t.teamId, a.teamId),
          isNotNull(t.heldKinds),
          isNull(t.releasedAt),
          'deletedAt' in t ? isNull(t.deletedAt) : undefined,
        ),
      )
      .returning({ id: t.id });
  };
  // Each observation let out gets a version (`release`), written before the update that lets it out.
  const [, o, s, p] = await d.batch([
    insertEventRows(
      d,
      releaseEventRows({ teamId: a.teamId, ids: a.ids.observation, actorUserId: a.actorUserId, at: a.at }),
    ),
    release('observation'),
    release('summary'),
    release('prompt'),
  ]);
  const released: HeldIds = {
    observation: o.map((r) => r.id),
    summary: s.map((r) => r.id),
    prompt: p.map((r) => r.id),
  };
  if (o.length + s.length + p.length) {
    await insertAudit(d, {
      teamId: a.teamId,
      actorUserId: a.actorUserId,
      action: 'hold.release',
      target: null,
      detail: { released },
      at: a.at,
    }).run();
  }
  return released;
}
