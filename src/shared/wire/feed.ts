// Feed shapes shared by the Worker (src/feed/feed.ts) and the browser viewer (client/api.ts): types only.
import type { SummaryContent } from './records';
import type { WireReceipt } from './receipts';

export interface ObservationItem {
  kind: 'observation';
  id: number;
  sessionId: number;
  projectId: number;
  projectKey: string;
  type: string;
  title: string | null;
  subtitle: string | null;
  author: string;
  promptNumber: number;
  createdAt: number;
  /** How it was stored (`observer`, `remember`, `prime`, …): the viewer marks primed notes. Search results leave it out. */
  source?: string;
}

export interface SummaryItem extends SummaryContent {
  kind: 'summary';
  id: number;
  sessionId: number;
  projectId: number;
  projectKey: string;
  author: string;
  promptNumber: number;
  createdAt: number;
}

export type FeedItem = ObservationItem | SummaryItem;

export interface SessionView {
  session: {
    id: number;
    /** The agent's session id. */
    key: string;
    projectKey: string;
    author: string;
    platform: string;
    promptCount: number;
    startedAt: number;
    endedAt: number | null;
  };
  summaries: SummaryItem[];
  observations: ObservationItem[];
  /** The memories that went into the session (its receipts) that the reader may read, with their evidence then. */
  receipts: WireReceipt[];
}
