// The live feed connection: /api/live over fetch, reconnected with capped exponential back-off until aborted.
import { ApiError, type Api, type FeedItem, type Query } from './api';

export type LiveState = 'connecting' | 'live' | 'offline';

export interface LiveHandlers {
  onState(s: LiveState): void;
  /** `reconnected` is true after the first connection: the caller should fetch what it missed meanwhile. */
  onReady(reconnected: boolean): void;
  onItem(item: FeedItem): void;
  /** The token stopped working: the loop ends. */
  onUnauthorized(e: ApiError): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runLive(api: Api, q: Query, signal: AbortSignal, on: LiveHandlers): Promise<void> {
  let delay = 1000;
  let connectedBefore = false;
  while (!signal.aborted) {
    on.onState('connecting');
    try {
      await api.live(q, signal, (event, data) => {
        if (event === 'ready') {
          on.onState('live');
          delay = 1000;
          on.onReady(connectedBefore);
          connectedBefore = true;
        } else if (event === 'item') {
          on.onItem(data as FeedItem);
        }
      });
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status === 401) return on.onUnauthorized(e);
    }
    if (signal.aborted) return;
    on.onState('offline');
    await sleep(delay);
    delay = Math.min(delay * 2, 30_000);
  }
}
