// Chunk marks: exact counts from a job whose step ran again after a restart. A step that deletes in chunks keeps
// its counts in the cursor, which is saved only when the step ends; a step cut off after some chunks' batches
// landed runs again from the old cursor and finds those rows gone, so it would count them nowhere (up to a step's
// chunks low). Each chunk's batch therefore writes an audit row (`<action>` on `<job id>:<chunk number>`) whose
// detail counts, inside the same batch and before its deletes, what they remove; the rerun reads the marks from its
// cursor's chunk number on and adds them first (the import job does the same per piece: src/transfer/import-job.ts).
import { auditDetails } from '../db/audit';

/** The target of chunk `n`'s mark. */
export const markTarget = (jobId: string, n: number): string => `${jobId}:${n}`;

/** Marks read per look-up; a step writes at most a few dozen chunks, so one or two look-ups find them all. */
const PAGE = 32;

/**
 * The counts of the chunks numbered `from` on that an earlier run of this step wrote (contiguous: the run stopped at
 * the first chunk it did not write), and the chunk number to go on from. One statement when nothing was lost.
 */
export async function earlierChunks(
  d1: D1Database,
  teamId: number,
  action: string,
  jobId: string,
  from: number,
  since: number,
): Promise<{ next: number; counts: Record<string, number>[] }> {
  const counts: Record<string, number>[] = [];
  let next = from;
  for (;;) {
    const targets = Array.from({ length: PAGE }, (_, i) => markTarget(jobId, next + i));
    const found = await auditDetails(d1, teamId, action, targets, since);
    for (const t of targets) {
      const detail = found.get(t);
      if (!detail) return { next, counts };
      counts.push(detail as Record<string, number>);
      next++;
    }
  }
}
