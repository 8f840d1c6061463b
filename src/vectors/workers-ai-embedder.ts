// Production embedder: Workers AI `@cf/baai/bge-m3` (multilingual, 1024 dimensions), batched by 100 texts.
import type { Embedder } from './types';

export const BGE_M3 = '@cf/baai/bge-m3';
const BATCH = 100;
/** bge-m3 is trained on long passages; a memory record's embedding text stays well under this. */
const MAX_CHARS = 8000;

/** The one method of the AI binding we call (tests spy on it). */
export interface AiBinding {
  run(model: typeof BGE_M3, inputs: { text: string[]; truncate_inputs?: boolean }): Promise<unknown>;
}

export class WorkersAiEmbedder implements Embedder {
  readonly name = 'workers-ai-bge-m3';
  readonly dimensions = 1024;
  /** Unrelated English text pairs typically score 0.3–0.45 with bge-m3; below this a neighbour is noise. */
  readonly minScore = 0.45;
  /** One model behind the binding: the same text gets the same vector, so query vectors are cached per isolate. */
  readonly querySource: { binding: object; key: string };
  constructor(private readonly ai: AiBinding) {
    this.querySource = { binding: ai, key: BGE_M3 };
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const chunk = texts.slice(i, i + BATCH).map((t) => t.slice(0, MAX_CHARS));
      const res = (await this.ai.run(BGE_M3, { text: chunk, truncate_inputs: true })) as { data?: unknown };
      const data = res?.data;
      if (
        !Array.isArray(data) ||
        data.length !== chunk.length ||
        !data.every((v) => Array.isArray(v) && v.length === this.dimensions)
      ) {
        throw new Error(`${BGE_M3} returned an unexpected shape`);
      }
      out.push(...(data as number[][]));
    }
    return out;
  }
}
