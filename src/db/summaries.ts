// Session summaries in D1: the one insert path.
import type { SQL } from 'drizzle-orm';
import { inertLine, inertText } from '#shared/inert';
import { redact, type RedactionTally } from '#shared/redact';
import { cjkTerms } from '../lib/cjk';
import type { SummaryContent } from '#shared/wire/records';
import type { Db } from './client';
import { heldKindsOf } from './held';
import { summaries, type NewSummary } from './schema';

export type SummaryPlace = { projectId: number | SQL<number>; sessionId: number | SQL<number> } & Pick<
  NewSummary,
  | 'teamId'
  | 'importedAuthor'
  | 'promptNumber'
  | 'createdAt'
  | 'contentHash'
  | 'authorUserId'
  | 'deviceId'
  | 'promptId'
  | 'turnKey'
  | 'releasedAt'
  | 'releasedBy'
>;

/** Every field made inert (src/shared/inert.ts) and redacted (src/shared/redact.ts); `tally` counts by kind. Pure. */
export function redactSummary(s: SummaryContent, tally?: RedactionTally): SummaryContent {
  const r = (t: string) => redact(inertText(t), tally);
  return {
    request: r(s.request),
    investigated: r(s.investigated),
    learned: r(s.learned),
    completed: r(s.completed),
    nextSteps: r(s.nextSteps),
    notes: s.notes === null ? null : r(s.notes),
  };
}

/** The one summary INSERT, secrets redacted, instruction-like text held (held.ts), idempotent per (session, content hash): answers the new id, or nothing. Batchable. */
export const insertSummary = (d: Db, place: SummaryPlace, raw: SummaryContent, tally?: RedactionTally) => {
  const s = redactSummary(raw, tally);
  const provenance = (v: string | null | undefined) => (v == null ? v : inertLine(v));
  return d
    .insert(summaries)
    .values({
      ...place,
      importedAuthor: provenance(place.importedAuthor),
      promptId: provenance(place.promptId),
      ...s,
      cjkTerms: cjkTerms(s.request, s.investigated, s.learned, s.completed, s.nextSteps, s.notes),
      heldKinds: heldKindsOf([s.request, s.investigated, s.learned, s.completed, s.nextSteps, s.notes]),
    })
    .onConflictDoNothing({ target: [summaries.sessionId, summaries.contentHash] })
    .returning({ id: summaries.id });
};
