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
];

export const DATA_VERSION = UPGRADES.reduce((v, u) => Math.max(v, u.version), 0);
