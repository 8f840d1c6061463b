// Local embedder backed by a real sentence model (Universal Sentence Encoder lite) that runs in Node beside the
// local stack (scripts/sentence-embedder.mjs), reached over HTTP: a 127.0.0.1 URL under wrangler dev, a service
// binding in the vitest pool. The Worker bundle carries only this client; production embeds with Workers AI.
import type { Embedder } from './types';

/** What the client needs of its transport: global `fetch` bound to a URL, or a service binding. */
export interface EmbedderService {
  fetch(input: string, init: RequestInit): Promise<Response>;
}

export const SENTENCE_EMBEDDER = 'local-use-lite';
const DIMENSIONS = 512;
/** Texts per request (the service accepts at most 128) and characters kept per text. */
const BATCH = 64;
const MAX_CHARS = 2000;

export class SentenceEmbedder implements Embedder {
  readonly name = SENTENCE_EMBEDDER;
  readonly dimensions = DIMENSIONS;
  /**
   * Measured on the public retrieval sets (BENCHMARKS.md, "Retrieval quality"): a question and an unrelated
   * chat line typically score 0.1–0.3 with this model; below this a neighbour is noise.
   */
  readonly minScore = 0.3;

  /** The model behind one service and URL answers the same text with the same vector (cached per isolate). */
  readonly querySource: { binding: object; key: string };

  constructor(
    private readonly service: EmbedderService,
    private readonly url = 'http://embedder/embed',
  ) {
    this.querySource = { binding: service, key: url };
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) out.push(...(await this.request(texts.slice(i, i + BATCH), false)));
    return out;
  }

  /** Queries go ahead of stored rows waiting in the service, so indexing never makes search miss its deadline. */
  async embedQuery(text: string): Promise<number[]> {
    const [v] = await this.request([text], true);
    if (!v) throw new Error('sentence embedder returned no vector');
    return v;
  }

  private async request(texts: string[], query: boolean): Promise<number[][]> {
    const chunk = texts.map((t) => t.slice(0, MAX_CHARS));
    const res = await this.service.fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(query ? { 'x-embed-priority': 'query' } : {}) },
      body: JSON.stringify({ texts: chunk }),
    });
    if (!res.ok) throw new Error(`sentence embedder answered ${res.status}`);
    const body = (await res.json()) as { vectors?: unknown };
    const vectors = body?.vectors;
    if (
      !Array.isArray(vectors) ||
      vectors.length !== chunk.length ||
      !vectors.every((v) => isVector(v, this.dimensions))
    ) {
      throw new Error('sentence embedder returned an unexpected shape');
    }
    return vectors as number[][];
  }
}

const isVector = (v: unknown, dims: number): v is number[] =>
  Array.isArray(v) && v.length === dims && v.every((x) => typeof x === 'number' && Number.isFinite(x));
