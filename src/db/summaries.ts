// Session summaries in D1: the one insert path.
import type { SQL } from 'drizzle-orm';
import { cjkTerms } from '../lib/cjk';
import type { Db } from './client';
import { summaries, type NewSummary } from './schema';

export interface SummaryContent {
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string | null;
}

export type SummaryPlace = { projectId: number | SQL<number>; sessionId: number | SQL<number> } & Pick<NewSummary, 'teamId' | 'importedAuthor' | 'promptNumber' | 'createdAt' | 'contentHash' | 'authorUserId' | 'deviceId' | 'promptId' | 'turnKey'>;

/** The one summary INSERT, idempotent per (session, content hash): answers the new id, or nothing. Batchable. */
export const insertSummary = (d: Db, place: SummaryPlace, s: SummaryContent) =>
  d
    .insert(summaries)
    .values({ ...place, ...s, cjkTerms: cjkTerms(s.request, s.investigated, s.learned, s.completed, s.nextSteps, s.notes) })
    .onConflictDoNothing({ target: [summaries.sessionId, summaries.contentHash] })
    .returning({ id: summaries.id });
