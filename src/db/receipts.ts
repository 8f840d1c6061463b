// Receipts in D1 (issue 34; src/receipts/ records and reads them): which records each injection of an agent session
// sent and how each was judged then. One row per session and record (a record sent again counts, keeps its first
// time and takes the latest judgement), at most SESSION_RECEIPTS_MAX per session (the least recently sent dropped),
// and one start mark per session (no observation: who, which device and project, when it last started). A receipt
// goes with its record (ON DELETE CASCADE: every path that deletes an observation), its session and the session's
// project (db/forget.ts). Reads pass the visibility rule: a receipt never shows a row the reader may not read.
import { and, count, desc, eq, isNotNull, isNull, notInArray } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { RECEIPT_CHANNELS, type ReceiptChannel } from '#shared/wire/receipts';
import { db as dbOf, type Db } from './client';
import { bumpUsed } from './corrections';
import { observations, projects, receipts, users } from './schema';
import { anyBit, byIds, countIn, excluded, orExcluded, plus, receiptRows, receiptStartRow } from './sqlite';
import { canReadObservation, type Viewer } from './visibility';

/** Receipts kept per session (records, the start mark aside): the least recently sent go first. */
export const SESSION_RECEIPTS_MAX = 200;

/** The channel's bit in `receipts.channels`. */
export const channelBit = (c: ReceiptChannel): number => 1 << RECEIPT_CHANNELS.indexOf(c);
/** The channels a `channels` value holds. */
export const channelsOf = (bits: number): ReceiptChannel[] => RECEIPT_CHANNELS.filter((c) => bits & channelBit(c));
/** Injections cairn made on its own (not an answer the agent asked for): what `used` means injected and fetched. */
const INJECTED = channelBit('index') | channelBit('prompt') | channelBit('file');

/** The session a receipt belongs to, and whose it is. */
export interface ReceiptSession {
  teamId: number;
  sessionKey: string;
  /** The session's project (the injection's): forgetting the project forgets its sessions' receipts. */
  projectId: number;
  userId: number;
  deviceId: number;
}

/** One record an injection sent, and how it was judged: `[id, evidence value, reasons comma-separated]`. */
export type SentItem = readonly [number, string, string];

/** The one insert path of receipts (every writer below). */
const intoReceipts = (d: Db) => d.insert(receipts);

/**
 * The statements recording one injection (one batch): with `start` the session's start mark (made once, its time
 * moved on at every start), then a row per sent record (existing ones counted again), then the cap.
 */
export function receiptWrites(
  d: Db,
  s: ReceiptSession,
  o: { channel: ReceiptChannel; items: readonly SentItem[]; at: number; start?: boolean },
) {
  const r = receipts;
  const mine = and(eq(r.teamId, s.teamId), eq(r.sessionKey, s.sessionKey));
  const qb = new QueryBuilder();
  const start = o.start
    ? [
        d
          .update(r)
          .set({ lastAt: o.at, sent: plus(r.sent, 1) })
          .where(and(mine, isNull(r.observationId))),
        intoReceipts(d).select(
          receiptStartRow(
            s,
            o.at,
            qb
              .select({ one: r.id })
              .from(r)
              .where(and(mine, isNull(r.observationId))),
          ),
        ),
      ]
    : [];
  const rows = o.items.length
    ? [
        intoReceipts(d)
          .select(receiptRows({ ...s, channels: channelBit(o.channel) }, o.items, o.at))
          .onConflictDoUpdate({
            target: [r.teamId, r.sessionKey, r.observationId],
            set: {
              channels: orExcluded(r.channels),
              evidence: excluded(r.evidence),
              reasons: excluded(r.reasons),
              sent: plus(r.sent, 1),
              lastAt: excluded(r.lastAt),
            },
          }),
        d.delete(r).where(
          and(
            mine,
            isNotNull(r.observationId),
            notInArray(
              r.id,
              qb
                .select({ id: r.id })
                .from(r)
                .where(and(mine, isNotNull(r.observationId)))
                .orderBy(desc(r.lastAt), desc(r.id))
                .limit(SESSION_RECEIPTS_MAX),
            ),
          ),
        ),
      ]
    : [];
  return [...start, ...rows];
}

/** Writes `receiptWrites` in one batch (nothing when there is nothing to write). */
export async function writeReceipts(
  d1: D1Database | Db,
  s: ReceiptSession,
  o: Parameters<typeof receiptWrites>[2],
): Promise<void> {
  const d = dbOf(d1);
  const list = receiptWrites(d, s, o);
  const [first, ...rest] = list;
  if (first) await d.batch([first, ...rest]);
}

/** A session as its start mark says: whose, which project (and its key), when it started first and last. */
export interface StartedSession extends ReceiptSession {
  projectKey: string | null;
  startedAt: number;
  firstAt: number;
}

const startFields = {
  teamId: receipts.teamId,
  sessionKey: receipts.sessionKey,
  projectId: receipts.projectId,
  projectKey: projects.key,
  userId: receipts.userId,
  deviceId: receipts.deviceId,
  startedAt: receipts.lastAt,
  firstAt: receipts.firstAt,
};

/**
 * The session a device started last (optionally in one project): where an MCP answer, which carries no session
 * id, is filed, and what `cairn why` shows without one. One statement.
 */
export async function latestSession(
  d1: D1Database | Db,
  owner: { teamId: number; userId: number; deviceId: number },
  projectId?: number,
): Promise<StartedSession | null> {
  const r = receipts;
  const row = await dbOf(d1)
    .select(startFields)
    .from(r)
    .leftJoin(projects, eq(projects.id, r.projectId))
    .where(
      and(
        eq(r.teamId, owner.teamId),
        eq(r.userId, owner.userId),
        eq(r.deviceId, owner.deviceId),
        isNull(r.observationId),
        projectId === undefined ? undefined : eq(r.projectId, projectId),
      ),
    )
    .orderBy(desc(r.lastAt), desc(r.id))
    .limit(1)
    .get();
  return row ?? null;
}

/** The start mark of the user's session `sessionKey` (another user's session is not found). One statement. */
export async function startedSession(
  d1: D1Database | Db,
  teamId: number,
  userId: number,
  sessionKey: string,
): Promise<StartedSession | null> {
  const r = receipts;
  const row = await dbOf(d1)
    .select(startFields)
    .from(r)
    .leftJoin(projects, eq(projects.id, r.projectId))
    .where(and(eq(r.teamId, teamId), eq(r.sessionKey, sessionKey), eq(r.userId, userId), isNull(r.observationId)))
    .get();
  return row ?? null;
}

/** How many records the user's session was given, and how many of them were stale when sent. One statement. */
export async function receiptCounts(
  d1: D1Database | Db,
  viewer: Viewer,
  sessionKey: string,
): Promise<{ used: number; stale: number }> {
  const r = receipts;
  const row = await dbOf(d1)
    .select({
      used: count(),
      stale: countIn(r.evidence, ['changed', 'gone']),
    })
    .from(r)
    .innerJoin(observations, eq(observations.id, r.observationId))
    .where(
      and(
        eq(r.teamId, viewer.teamId),
        eq(r.sessionKey, sessionKey),
        eq(r.userId, viewer.userId),
        canReadObservation(viewer),
      ),
    )
    .get();
  return { used: row?.used ?? 0, stale: row?.stale ?? 0 };
}

/** One receipt with what its record says now, for `cairn why` and the viewer's session page. */
export interface ReceiptRow {
  id: number;
  title: string | null;
  type: string;
  project: string;
  author: string;
  createdAt: number;
  channels: number;
  evidence: string;
  reasons: string;
  sent: number;
  firstAt: number;
  lastAt: number;
  usedAt: number | null;
}

/**
 * A session's receipts the viewer may read, the most recently sent first: `userId` limits them to one member's
 * (a session's receipts are its owner's; the viewer's session page shows them to whoever may read the session,
 * each record only if that reader may read it). One statement.
 */
export async function receiptsOf(
  d1: D1Database | Db,
  viewer: Viewer,
  sessionKey: string,
  userId?: number,
): Promise<ReceiptRow[]> {
  const r = receipts;
  const o = observations;
  return dbOf(d1)
    .select({
      id: o.id,
      title: o.title,
      type: o.type,
      project: projects.key,
      author: users.handle,
      createdAt: o.createdAt,
      channels: r.channels,
      evidence: r.evidence,
      reasons: r.reasons,
      sent: r.sent,
      firstAt: r.firstAt,
      lastAt: r.lastAt,
      usedAt: r.usedAt,
    })
    .from(r)
    .innerJoin(o, eq(o.id, r.observationId))
    .innerJoin(projects, eq(projects.id, o.projectId))
    .innerJoin(users, eq(users.id, o.authorUserId))
    .where(
      and(
        eq(r.teamId, viewer.teamId),
        eq(r.sessionKey, sessionKey),
        userId === undefined ? undefined : eq(r.userId, userId),
        canReadObservation(viewer, o),
      ),
    )
    .orderBy(desc(r.lastAt), desc(r.id))
    .limit(SESSION_RECEIPTS_MAX);
}

/**
 * The session fetched `ids` in full: those an injection had sent it before (and not yet counted) become used, once
 * each: their signals count one more `used`, and the receipt keeps when. One batch of two statements.
 */
export async function markUsed(
  d1: D1Database | Db,
  s: Pick<ReceiptSession, 'teamId' | 'sessionKey'>,
  ids: readonly number[],
  at: number,
): Promise<void> {
  if (!ids.length) return;
  const d = dbOf(d1);
  const r = receipts;
  const unused = and(
    eq(r.teamId, s.teamId),
    eq(r.sessionKey, s.sessionKey),
    byIds(r.observationId, ids),
    isNull(r.usedAt),
    anyBit(r.channels, INJECTED),
  );
  const sent = new QueryBuilder().select({ id: r.observationId }).from(r).where(unused);
  // The signals first: the second statement marks the rows the first one counted.
  await d.batch([bumpUsed(d, s.teamId, sent, at), d.update(r).set({ usedAt: at }).where(unused)]);
}

/** A session's receipts, start mark included (forgetting the session). Batchable. */
export const deleteSessionReceipts = (d: Db, teamId: number, sessionKey: string) =>
  d.delete(receipts).where(and(eq(receipts.teamId, teamId), eq(receipts.sessionKey, sessionKey)));

/** The receipts of a project's sessions (forgetting the project; its records' receipts go with them). Batchable. */
export const deleteProjectReceipts = (d: Db, teamId: number, projectId: number) =>
  d.delete(receipts).where(and(eq(receipts.teamId, teamId), eq(receipts.projectId, projectId)));
