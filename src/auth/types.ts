// Who is calling: resolved once per request from the bearer token.
import type { TeamSettings } from '../db/team-settings';

export type Scope = 'ingest' | 'read' | 'admin';
export type Role = 'owner' | 'admin' | 'member';

export interface AuthContext {
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
