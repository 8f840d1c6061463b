// Production embedder: Workers AI `@cf/baai/bge-m3` (multilingual, 1024 dimensions), in calls within its limits.
import { groupWithin, type EmbedLimits } from './limits';
import type { Embedder } from './types';

export const BGE_M3 = '@cf/baai/bge-m3';

/**
 * bge-m3 on Workers AI (its model page and input schema, cloudflare-docs src/content/workers-ai-models/bge-m3.json):
 * at most 100 texts a call (`maxItems`), each at least one character, and a context window of 60,000 tokens. Whether
 * the window bounds each text or the whole call is not documented, and batches under 100 texts are reported failing
 * once the texts were long (cloudflare-docs issue #11316), so a call carries at most 40,000 estimated tokens (the
 * estimate, src/lib/tokens.ts, counts three ASCII characters a token where the model's tokenizer takes about four,
 * and text of few words can go below three: two thirds of the window leaves that room). A text is cut at 8,000
 * characters: a memory record's embedding text stays well under it, and bge-m3 reads at most 8,192 tokens of one.
 */
export const BGE_M3_LIMITS: EmbedLimits = { texts: 100, tokens: 40_000, chars: 8_000 };

/** The one method of the AI binding we call (tests spy on it). */
export interface AiBinding {
  run(model: typeof BGE_M3, inputs: { text: string[]; truncate_inputs?: boolean }): Promise<unknown>;
}

export class WorkersAiEmbedder implements Embedder {
  readonly name = 'workers-ai-bge-m3';
  readonly dimensions = 1024;
  /** Unrelated English text pairs typically score 0.3–0.45 with bge-m3; below this a neighbour is noise. */
  readonly minScore = 0.45;
  readonly limits = BGE_M3_LIMITS;
  /** One model behind the binding: the same text gets the same vector, so query vectors are cached per isolate. */
  readonly querySource: { binding: object; key: string };
  constructor(private readonly ai: AiBinding) {
    this.querySource = { binding: ai, key: BGE_M3 };
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    const cut = texts.map((t) => t.slice(0, this.limits.chars));
    for (const chunk of groupWithin(cut, (t) => [t], this.limits)) {
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
