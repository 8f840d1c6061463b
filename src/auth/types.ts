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
}
