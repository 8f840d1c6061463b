// Token issue and lookup. Plaintext tokens exist only in the response that mints them.
import { db, type Db } from '../db/client';
import { parseTeamSettings } from '../db/team-settings';
import { insertToken, tokenByHash } from '../db/tokens';
import { newToken, sha256Hex, timingSafeEqual, tokenPrefix } from '../lib/crypto';
import { cachedTokenCheck } from './token-cache';
import type { AuthContext, Role, Scope } from './types';

export type TokenCheck =
  | { ok: true; auth: AuthContext; lastUsedAt: number | null; expiresAt: number | null }
  | { ok: false; reason: 'unknown' }
  /** A real token that no longer works: team and token ids let the caller audit the attempt. */
  | { ok: false; reason: 'revoked' | 'expired'; teamId: number; tokenId: number; userId: number };

/** The verdict for a bearer token: from this isolate's short memo when fresh (src/auth/token-cache.ts), else D1. */
export async function lookupToken(
  db: D1Database,
  token: string,
  now: number,
): Promise<{ hash: string; check: TokenCheck }> {
  const hash = await sha256Hex(token);
  return { hash, check: await cachedTokenCheck(hash, now, () => readToken(db, hash, now)) };
}

async function readToken(db: D1Database, hash: string, now: number): Promise<TokenCheck> {
  const row = await tokenByHash(db, hash);
  if (!row || !timingSafeEqual(row.hash, hash)) return { ok: false, reason: 'unknown' };
  const ids = { teamId: row.teamId, tokenId: row.id, userId: row.userId };
  if (row.revokedAt !== null || row.removedAt !== null) return { ok: false, reason: 'revoked', ...ids };
  if (row.expiresAt !== null && row.expiresAt <= now) return { ok: false, reason: 'expired', ...ids };
  return {
    ok: true,
    lastUsedAt: row.lastUsedAt,
    expiresAt: row.expiresAt,
    auth: {
      tokenId: row.id,
      teamId: row.teamId,
      teamSlug: row.slug,
      userId: row.userId,
      handle: row.handle,
      role: row.role,
      deviceId: row.deviceId,
      deviceName: row.deviceName,
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
 * A new token and the query that stores it (for callers that batch it with other writes, e.g. rotate).
 * The plaintext is returned once and never stored.
 */
export async function prepareMint(d1: D1Database | Db, input: MintInput, now: number) {
  const token = newToken();
  const hash = await sha256Hex(token);
  const prefix = tokenPrefix(token);
  const insert = insertToken(db(d1), {
    teamId: input.teamId,
    userId: input.userId,
    deviceId: input.deviceId,
    hash,
    prefix,
    label: input.label ?? null,
    scopes: input.scopes.join(','),
    createdAt: now,
    expiresAt: input.expiresAt ?? null,
  });
  return { token, prefix, insert };
}

/** Creates a token row and returns the plaintext once. */
export async function mintToken(d1: D1Database | Db, input: MintInput, now: number) {
  const { token, prefix, insert } = await prepareMint(d1, input, now);
  const [row] = await insert;
  return { token, id: row!.id, prefix };
}
