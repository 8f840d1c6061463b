// Who is calling: resolved once per request from the bearer token.
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
  /** Team-chosen per-token limits (requests/minute); they can only lower the server's defaults. */
  rateLimits?: { ingest?: number; read?: number };
}
