// Receipts (issue 34): every injection records which records it sent into an agent session and how each was judged
// against the reader's checkout (src/shared/evidence.ts). The hooks' injections name their session (the SessionStart
// index, prompt context, file context before a Read); an MCP answer carries no session id (Claude Code's MCP
// connection is made once per process, without it), so it is filed under the session its device started last. A
// record an injection sent that the session then fetches in full counts as used (its signals: src/corrections/).
import type { Judgement } from '#shared/evidence';
import type { ReceiptChannel } from '#shared/wire/receipts';
import type { AuthContext } from '../auth/types';
import { latestSession, markUsed, writeReceipts, type ReceiptSession, type SentItem } from '../db/receipts';
import { errorText, log } from '../lib/log';

type Owner = Pick<AuthContext, 'teamId' | 'userId' | 'deviceId'>;

/** How a sent record was judged (a Judgement, or its wire form on a full record). */
type Judged = Pick<Judgement, 'value'> & { reasons: readonly string[] };

/** What a judgement is stored as; a record not judged is `unknown` for want of a checkout. */
export const sentItem = (id: number, j: Judged | null | undefined): SentItem => [
  id,
  j?.value ?? 'unknown',
  (j?.reasons ?? ['no_checkout']).join(','),
];

const sessionOf = (auth: Owner, sessionKey: string, projectId: number): ReceiptSession => ({
  teamId: auth.teamId,
  sessionKey,
  projectId,
  userId: auth.userId,
  deviceId: auth.deviceId ?? 0,
});

/**
 * Records one hook injection of `sessionKey` (null: a client that names no session, nothing is recorded). `start`:
 * the SessionStart index, which also marks the session as the device's latest. A receipt that cannot be written is
 * logged, never fails the injection: the agent gets its memory either way.
 */
export async function recordInjection(
  d: D1Database,
  auth: Owner,
  o: {
    sessionKey: string | null | undefined;
    projectId: number | undefined;
    channel: ReceiptChannel;
    sent: readonly { id: number; evidence?: Judged | null }[];
    now: number;
    start?: boolean;
  },
): Promise<void> {
  if (!o.sessionKey || o.projectId === undefined) return;
  if (!o.sent.length && !o.start) return;
  try {
    await writeReceipts(d, sessionOf(auth, o.sessionKey, o.projectId), {
      channel: o.channel,
      items: o.sent.map((r) => sentItem(r.id, r.evidence)),
      at: o.now,
      start: o.start,
    });
  } catch (err) {
    log('warn', 'receipts not recorded', { channel: o.channel, message: errorText(err) });
  }
}

/**
 * An MCP answer: its observations are filed under the device's latest session, and those of them it fetched in full
 * (`fetched`) that an injection had sent the session before count as used first. Nothing without a started session.
 */
export async function recordMcpAnswer(
  d: D1Database,
  auth: Owner,
  o: {
    sent: readonly { id: number; evidence?: Judged | null }[];
    fetched?: readonly number[];
    now: number;
  },
): Promise<void> {
  if (!o.sent.length && !o.fetched?.length) return;
  try {
    const s = await latestSession(d, { teamId: auth.teamId, userId: auth.userId, deviceId: auth.deviceId ?? 0 });
    if (!s) return;
    if (o.fetched?.length) await markUsed(d, s, o.fetched, o.now);
    await writeReceipts(d, s, { channel: 'mcp', items: o.sent.map((r) => sentItem(r.id, r.evidence)), at: o.now });
  } catch (err) {
    log('warn', 'receipts not recorded', { channel: 'mcp', message: errorText(err) });
  }
}
