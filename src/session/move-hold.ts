// A session object during a team move (src/transfer/move-job.ts): what it reports to the move, and how what it
// still holds afterwards is re-pointed at the rows of the database the team moved to.
import { projectIdsByKeys, sessionRowByKey } from '../db/move';
import type { EventBuffer } from './buffer';
import { sessionOf } from './intake';

/** What a held session object still has that names the old database's rows. */
export interface MoveQuiet {
  pending: number;
  inFlight: number;
  turnOpen: boolean;
  afterStore: number;
  /** Nothing of the above: the move may copy the team. */
  quiet: boolean;
}

/**
 * Snapshots (pending and dead-lettered events) name a session row and a project row by id, ids of the database
 * they were read on. After a move those rows have new ids: found again by the session's key and each
 * project's key on `d1` (the team's database now). Answers how many events were re-pointed.
 */
export async function rebaseSnapshots(b: EventBuffer, d1: D1Database, teamId: number): Promise<number> {
  const session = sessionOf(b);
  if (!session) return 0;
  const snaps = b.snapshots();
  if (snaps.length === 0) return 0;
  const row = await sessionRowByKey(d1, teamId, session.sessionKey);
  const projects = await projectIdsByKeys(d1, teamId, [...new Set(snaps.map((s) => s.projectKey))]);
  if (!row) return 0;
  return b.remapSnapshots((s) => ({
    ...s,
    sessionDbId: row.id,
    projectId: projects.get(s.projectKey) ?? row.projectId,
  }));
}
