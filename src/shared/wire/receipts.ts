// Receipts (issue 34): which memories entered an agent session, by which injection, and how each was judged against
// the reader's checkout when it was sent (src/shared/evidence.ts). What `GET /api/receipts` answers (`cairn why`),
// the viewer's session page lists and the status line counts. Types and names only.
import type { Evidence, EvidenceReason } from '../evidence';

/** The injections that send memory into a session, in the order their bits are stored (receipts.channels). */
export const RECEIPT_CHANNELS = ['index', 'prompt', 'file', 'mcp'] as const;
export type ReceiptChannel = (typeof RECEIPT_CHANNELS)[number];

/** Stale: a memory sent while its code had changed or was gone (`changed`, `gone`). */
export const isStale = (e: Evidence | string) => e === 'changed' || e === 'gone';

/** One memory a session was given. */
export interface WireReceipt {
  id: number;
  title: string | null;
  type: string;
  project: string;
  author: string;
  /** ISO time the record was made. */
  created_at: string;
  /** Every injection that sent it to the session. */
  channels: ReceiptChannel[];
  /** How it was judged when it was last sent (not now). */
  evidence: { value: Evidence; reasons: EvidenceReason[] };
  /** How often it was sent, first and last (ISO). */
  sent: number;
  first_sent_at: string;
  last_sent_at: string;
  /** When the session fetched it in full after an injection had sent it (counted as used), or null. */
  fetched_at: string | null;
}

/** The counts the status line shows: memories given to the session, and how many of them were stale. */
export interface WireReceiptCounts {
  used: number;
  stale: number;
}

/** `GET /api/receipts`: one session's receipts, newest sent first (at most SESSION_RECEIPTS_MAX). */
export interface WireReceipts extends WireReceiptCounts {
  /** The agent's session id; null when no session is known (none given and none started on this device). */
  session: string | null;
  project: string | null;
  /** ISO time of the session's first injection. */
  started_at: string | null;
  memories: WireReceipt[];
}
