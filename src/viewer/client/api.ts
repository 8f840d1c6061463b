// Talks to the Worker's /api routes with the bearer token in a header (never in a URL).
import { parseFrame, withQuery, type Query } from './wire';

export type { Query } from './wire';
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ObservationItem {
  kind: 'observation';
  id: number;
  sessionId: number | null;
  projectKey: string;
  type: string;
  title: string | null;
  subtitle: string | null;
  author: string;
  createdAt: number;
  score?: number;
}

export interface SummaryItem {
  kind: 'summary';
  id: number;
  sessionId: number;
  projectKey: string;
  author: string;
  promptNumber: number;
  createdAt: number;
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string | null;
}

export type FeedItem = ObservationItem | SummaryItem;

export interface ObservationRecord {
  id: number;
  project: string;
  session: string;
  promptNumber: number;
  type: string;
  title: string | null;
  subtitle: string | null;
  facts: string[];
  narrative: string | null;
  concepts: string[];
  filesRead: string[];
  filesModified: string[];
  createdAt: string;
  author: string;
  device: string | null;
  tokens: number;
}

export interface SessionView {
  session: { id: number; projectKey: string; author: string; platform: string; promptCount: number; startedAt: number; endedAt: number | null };
  summaries: SummaryItem[];
  observations: ObservationItem[];
}

export interface Project {
  key: string;
  visibility: 'team' | 'private';
  observations: number;
  last_activity: string | null;
}

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
      res = await fetch(withQuery(path, q), { headers: this.headers(), signal, cache: 'no-store', referrerPolicy: 'no-referrer' });
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
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
