// Token issue and lookup. Plaintext tokens exist only in the response that mints them.
import { parseTeamSettings } from '../db/team-settings';
import { newToken, sha256Hex, timingSafeEqual, tokenPrefix } from '../lib/crypto';
import { cachedTokenCheck } from './token-cache';
import type { AuthContext, Role, Scope } from './types';

interface TokenRow {
  id: number;
  hash: string;
  team_id: number;
  slug: string;
  user_id: number;
  handle: string;
  role: Role;
  device_id: number | null;
  device_name: string | null;
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  removed_at: number | null;
  last_used_at: number | null;
  settings: string;
}

export type TokenCheck =
  | { ok: true; auth: AuthContext; lastUsedAt: number | null; expiresAt: number | null }
  | { ok: false; reason: 'unknown' }
  /** A real token that no longer works: team and token ids let the caller audit the attempt. */
  | { ok: false; reason: 'revoked' | 'expired'; teamId: number; tokenId: number; userId: number };

/** The verdict for a bearer token: from this isolate's short memo when fresh (src/auth/token-cache.ts), else D1. */
export async function lookupToken(db: D1Database, token: string, now: number): Promise<{ hash: string; check: TokenCheck }> {
  const hash = await sha256Hex(token);
  return { hash, check: await cachedTokenCheck(hash, now, () => readToken(db, hash, now)) };
}

async function readToken(db: D1Database, hash: string, now: number): Promise<TokenCheck> {
  const row = await db
    .prepare(
      `SELECT t.id, t.hash, t.team_id, tm.slug, t.user_id, u.handle, u.role, t.device_id, d.name AS device_name,
              t.scopes, t.expires_at, t.revoked_at, u.removed_at, t.last_used_at, tm.settings
         FROM tokens t JOIN teams tm ON tm.id = t.team_id JOIN users u ON u.id = t.user_id
         LEFT JOIN devices d ON d.id = t.device_id
        WHERE t.hash = ?`,
    )
    .bind(hash)
    .first<TokenRow>();
  if (!row || !timingSafeEqual(row.hash, hash)) return { ok: false, reason: 'unknown' };
  const ids = { teamId: row.team_id, tokenId: row.id, userId: row.user_id };
  if (row.revoked_at !== null || row.removed_at !== null) return { ok: false, reason: 'revoked', ...ids };
  if (row.expires_at !== null && row.expires_at <= now) return { ok: false, reason: 'expired', ...ids };
  return {
    ok: true,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    auth: {
      tokenId: row.id,
      teamId: row.team_id,
      teamSlug: row.slug,
      userId: row.user_id,
      handle: row.handle,
      role: row.role,
      deviceId: row.device_id,
      deviceName: row.device_name,
      scopes: row.scopes.split(',').filter(Boolean) as Scope[],
      settings: parseTeamSettings(row.settings),
    },
  };
}

export interface MintInput {
  teamId: number;
  userId: number;
  deviceId: number | null;
  scopes: Scope[];
  label?: string | null;
  expiresAt?: number | null;
}

/**
 * A new token and the statement that stores it (for callers that batch it with other writes, e.g. rotate).
 * The plaintext is returned once and never stored.
 */
export async function prepareMint(db: D1Database, input: MintInput, now: number) {
  const token = newToken();
  const hash = await sha256Hex(token);
  const statement = db
    .prepare(
      `INSERT INTO tokens (team_id, user_id, device_id, hash, prefix, label, scopes, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    )
    .bind(
      input.teamId,
      input.userId,
      input.deviceId,
      hash,
      tokenPrefix(token),
      input.label ?? null,
      input.scopes.join(','),
      now,
      input.expiresAt ?? null,
    );
  return { token, prefix: tokenPrefix(token), statement };
}

/** Creates a token row and returns the plaintext once. */
export async function mintToken(db: D1Database, input: MintInput, now: number) {
  const { token, prefix, statement } = await prepareMint(db, input, now);
  const row = await statement.first<{ id: number }>();
  return { token, id: row!.id, prefix };
}
