// Moving a team to another shard (docs/capacity.md): its memory is exported from the old database as the
// NDJSON records of the team export, imported into the new one, the rows the export leaves out are copied,
// the shard map is flipped, the old database is emptied of the team, and the moved records get their
// vectors again. Run by the operator (POST /api/admin/teams/:slug/move) while the team is quiet (refused with
// 409 `team_busy` within QUIET_MS of its last write unless forced): a session whose events are still buffered
// in its Durable Object holds row ids of the old database (see capacity.md, "what is not done").
import { copyTeamExtras, deleteTeamRows, lastWriteAt, teamProjectIds } from '../db/move';
import { AppError } from '../lib/errors';
import { recordIdsOf } from '../db/forget';
import { purgeDeletedTerms } from '../db/fts';
import { DIRECTORY, directoryDb, mappedShard, setTeamShard, shardDb, syncTeamCopy, type TeamDbs } from '../db/shards';
import type { CairnEnv } from '../env';
import { getVectorAdapters } from '../vectors/adapters';
import { deleteRecordVectors, indexRecords, type RecordIds } from '../vectors/index-records';
import { exportRecords } from './export';
import { importPart, numbered, type ImportCounts } from './import';
import type { ExportRecord } from './records';

/** Records restored per batch: each part is one small transaction on the target. */
const MOVE_CHUNK = 200;

/**
 * How long a team must have written nothing before it is moved without `force`: a session still working holds
 * the old database's row ids in its Durable Object, and what it writes during the move would stay behind.
 */
export const QUIET_MS = 10 * 60_000;

export interface Moved {
  from: string;
  to: string;
  counts: ImportCounts;
}

export async function moveTeam(env: CairnEnv, teamId: number, to: string, now: number, opts: { force?: boolean } = {}): Promise<Moved> {
  const from = await mappedShard(env, teamId);
  const counts: ImportCounts = { users: 0, projects: 0, sessions: 0, prompts: 0, observations: 0, summaries: 0 };
  if (from === to) return { from, to, counts };
  const source = shardDb(env, from);
  const last = await lastWriteAt(source, teamId);
  if (!opts.force && last !== null && now - last < QUIET_MS) {
    const wait = Math.ceil((QUIET_MS - (now - last)) / 60_000);
    throw new AppError(409, 'team_busy', `The team wrote memory ${Math.round((now - last) / 1000)} s ago; move it when it has been quiet for ${QUIET_MS / 60_000} minutes (about ${wait} more), or send "force": true.`);
  }
  const target: TeamDbs = { teamId, dir: directoryDb(env), team: shardDb(env, to) };
  // Whatever an earlier, interrupted move left on the target goes first, so the import starts from nothing;
  // the member rows the memory references are copied there before it.
  await deleteTeamRows(target.team, teamId, { copies: false });
  await syncTeamCopy(target);
  const imported: Required<RecordIds> = { observations: [], summaries: [], prompts: [] };
  const flush = async (batch: ExportRecord[]) => {
    const r = await importPart(target, { kind: 'restore' }, numbered(batch), now);
    for (const k of Object.keys(counts) as (keyof ImportCounts)[]) counts[k] += r.counts[k];
    for (const k of Object.keys(imported) as (keyof RecordIds)[]) imported[k].push(...r.ids[k]);
  };
  let batch: ExportRecord[] = [];
  for await (const record of exportRecords(source, teamId, await teamProjectIds(source, teamId), () => true)) {
    batch.push(record);
    if (batch.length >= MOVE_CHUNK) {
      await flush(batch);
      batch = [];
    }
  }
  if (batch.length) await flush(batch);
  await copyTeamExtras(source, target.team, teamId);
  // The old rows' vectors go while the team still routes to the old database (their ids are that database's
  // and carry its prefix in a shared Vectorize index); search answers from FTS alone until the new ones exist.
  const adapters = getVectorAdapters(env);
  await deleteRecordVectors(adapters, teamId, await recordIdsOf(source, teamId, {}));
  await setTeamShard(env, teamId, to, now);
  await deleteTeamRows(source, teamId, { copies: from !== DIRECTORY });
  await purgeDeletedTerms(source);
  // New row ids on the new database, and the new database's prefix: the moved rows get their vectors again.
  for (const k of Object.keys(imported) as (keyof RecordIds)[]) {
    for (let i = 0; i < imported[k].length; i += 100) await indexRecords(env, teamId, { [k]: imported[k].slice(i, i + 100) }, { adapters });
  }
  return { from, to, counts };
}
