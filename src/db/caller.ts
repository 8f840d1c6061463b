// Who is asking, as far as the data layer needs to know: the visibility rule and project ownership read only
// these fields. The auth layer's AuthContext extends it, so db/ never imports from auth/.
import type { TeamSettings } from './team-settings';

export interface Caller {
  teamId: number;
  userId: number;
  /** Names the caller's own `local/<handle>/…` projects. */
  handle: string;
  /** The team's settings when already read with the token (see settingsFor). */
  settings?: TeamSettings;
  /** Their role in the team when known (a token's caller): the write policy's `reader` rule reads it. */
  role?: string;
}
