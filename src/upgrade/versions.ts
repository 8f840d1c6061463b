// What each version of cairn's data needs after its migrations, done by the server itself (README "Upgrading").
// D1 migrations change tables; some changes leave work that SQL cannot do: vectors to compute, indexes to fill.
// Each such change raises DATA_VERSION by one with a line here; the directory records the version an upgrade job
// last reached (maintenance_runs, job `upgrade`), and a Worker that finds it lower starts the job (src/upgrade/).

export interface DataUpgrade {
  version: number;
  /** The migrations that brought it. */
  migrations: string;
  /** What the upgrade job does for it, in words for the operator. */
  does: string;
}

export const UPGRADES: readonly DataUpgrade[] = [
  {
    version: 1,
    migrations: '0007_vector_parts',
    does: "vectors for every fact of an observation, for summaries and for prompts: each team's embed job embeds the records that have none (observations with facts embedded before 0007 included)",
  },
  {
    version: 2,
    migrations: '0017_held_back',
    does: "rows stored before the hold-back rule judged for instruction-like text: each team's judge-held job (src/hold/backfill-job.ts) holds the ones the write path would hold, in bounded steps, once",
  },
];

/** The version whose upgrade starts every team's judge-held job (when the data was below it). */
export const JUDGE_HELD_VERSION = 2;

export const DATA_VERSION = UPGRADES.reduce((v, u) => Math.max(v, u.version), 0);
