// Who is calling: resolved once per request from the bearer token.
import type { Caller } from '../db/caller';
import type { TeamSettings } from '../db/team-settings';
import type { CairnEnv } from '../env';

export type Scope = 'ingest' | 'read' | 'admin';
/** `reader` (issue 38): reads the team's memory, writes only to their own private projects (db/write-policy.ts). */
export type Role = 'owner' | 'admin' | 'member' | 'reader';

export interface AuthContext extends Caller {
  tokenId: number;
  teamId: number;
  teamSlug: string;
  userId: number;
  handle: string;
  role: Role;
  deviceId: number | null;
  deviceName: string | null;
  scopes: Scope[];
  /**
   * The team's settings, read in the same D1 row as the token so a request needs no second read (use
   * `settingsFor`). Absent only in contexts built by hand.
   */
  settings?: TeamSettings;
}

/** Hono's environment for every route: the bindings, and the caller once `authenticate` has run. */
export type AppEnv = { Bindings: CairnEnv; Variables: { auth: AuthContext } };
