// Talks to the Worker's /api routes with the bearer token in a header (never in a URL).
import type { ObservationRecord, ProjectSummary as Project } from '#shared/wire/records';
import type { ObservationItem as FeedObservation, SessionView, SummaryItem } from '#shared/wire/feed';
import { parseFrame, withQuery, type Query } from './wire';

export type { ObservationRecord, Project, Query, SessionView, SummaryItem };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A card in the list: a feed observation, or a search hit (no session or prompt known, with its score). */
export type ObservationItem = Omit<FeedObservation, 'sessionId' | 'projectId' | 'promptNumber'> & {
  sessionId: number | null;
  score?: number;
};
export type FeedItem = ObservationItem | SummaryItem;

export interface SearchResult {
  id: number;
  time: string;
  type: string;
  title: string | null;
  project: string;
  author: string;
  tokens: number;
  score: number;
}

async function failure(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    return new ApiError(res.status, body.error?.code ?? `http_${res.status}`, body.error?.message ?? res.statusText);
  } catch {
    return new ApiError(res.status, `http_${res.status}`, res.statusText);
  }
}

export class Api {
  constructor(private readonly token: string) {}

  private headers(): HeadersInit {
    return { authorization: `Bearer ${this.token}`, accept: 'application/json' };
  }

  async get<T>(path: string, q?: Query, signal?: AbortSignal): Promise<T> {
    let res: Response;
    try {
      res = await fetch(withQuery(path, q), {
        headers: this.headers(),
        signal,
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
      throw new ApiError(0, 'network', (e as Error).message);
    }
    if (!res.ok) throw await failure(res);
    return (await res.json()) as T;
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(path, {
        method: 'POST',
        headers: { ...this.headers(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
    } catch (e) {
      throw new ApiError(0, 'network', (e as Error).message);
    }
    if (!res.ok) throw await failure(res);
    return (await res.json()) as T;
  }

  /**
   * Reads /api/live as server-sent events over fetch (EventSource cannot send headers). Resolves when the
   * server ends the stream; rejects on HTTP or network errors; stops quietly when `signal` aborts.
   */
  async live(q: Query, signal: AbortSignal, onEvent: (event: string, data: unknown) => void): Promise<void> {
    const res = await fetch(withQuery('/api/live', q), {
      headers: { authorization: `Bearer ${this.token}`, accept: 'text/event-stream' },
      signal,
      cache: 'no-store',
    });
    if (!res.ok || !res.body) throw await failure(res);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += value;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = parseFrame(buf.slice(0, i));
        buf = buf.slice(i + 2);
        if (frame) onEvent(frame.event, frame.data);
      }
    }
  }
}
