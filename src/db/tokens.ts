// Tokens in D1: lookup by hash (with team, user and device), the one insert path, and last-use stamps.
import { eq } from 'drizzle-orm';
import { db as dbOf, type Db } from './client';
import { devices, teams, tokens, users } from './schema';

/** The token stored under `hash` with what authentication needs from its team, user and device. */
export function tokenByHash(d1: D1Database | Db, hash: string) {
  return dbOf(d1)
    .select({
      id: tokens.id,
      hash: tokens.hash,
      teamId: tokens.teamId,
      slug: teams.slug,
      userId: tokens.userId,
      handle: users.handle,
      role: users.role,
      deviceId: tokens.deviceId,
      deviceName: devices.name,
      scopes: tokens.scopes,
      expiresAt: tokens.expiresAt,
      revokedAt: tokens.revokedAt,
      removedAt: users.removedAt,
      lastUsedAt: tokens.lastUsedAt,
      settings: teams.settings,
    })
    .from(tokens)
    .innerJoin(teams, eq(teams.id, tokens.teamId))
    .innerJoin(users, eq(users.id, tokens.userId))
    .leftJoin(devices, eq(devices.id, tokens.deviceId))
    .where(eq(tokens.hash, hash))
    .get();
}

export type NewToken = Pick<
  typeof tokens.$inferInsert,
  'teamId' | 'userId' | 'deviceId' | 'hash' | 'prefix' | 'label' | 'scopes' | 'createdAt' | 'expiresAt'
>;

/** The one token INSERT, answering the new id. Batchable. */
export const insertToken = (d: Db, row: NewToken) => d.insert(tokens).values(row).returning({ id: tokens.id });

/** Stamps a token's (and its device's) last use, in one batch. */
export async function touchTokenUse(
  d1: D1Database | Db,
  tokenId: number,
  deviceId: number | null,
  now: number,
): Promise<void> {
  const d = dbOf(d1);
  const token = d.update(tokens).set({ lastUsedAt: now }).where(eq(tokens.id, tokenId));
  if (deviceId === null) await token.run();
  else await d.batch([token, d.update(devices).set({ lastSeenAt: now }).where(eq(devices.id, deviceId))]);
}
