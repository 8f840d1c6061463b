// A Workers AI binding that answers `@cf/baai/bge-m3` as Cloudflare documents it and refuses what the documentation
// says it refuses (its model page and input schema: cloudflare-docs src/content/workers-ai-models/bge-m3.json;
// its errors: developers.cloudflare.com/workers-ai/platform/errors): at most 100 texts a call, each at least one
// character, a context window of 60,000 tokens (held here against the whole call: whether it bounds each text or the
// call is not documented, and long batches under 100 texts are reported failing, cloudflare-docs #11316), and with
// `truncate_inputs` off a text past the model's own 8,192 tokens. Vectors are the offline embedder's, 1,024 numbers.
// Tests can take it down (every call refused, as an outage would) or have it refuse chosen texts (one record the
// model cannot read), and read every call it answered or refused.
import { embedText } from '../../../src/vectors/local-embedder';
import { BGE_M3, type AiBinding } from '../../../src/vectors/workers-ai-embedder';

export const BGE_M3_MAX_TEXTS = 100;
export const BGE_M3_WINDOW_TOKENS = 60_000;
/** bge-m3 reads at most this many tokens of one text (BAAI's model card: max length 8192). */
export const BGE_M3_TEXT_TOKENS = 8_192;

/**
 * Tokens bge-m3 takes for `text`, standing in for its tokenizer (XLM-RoBERTa's sentencepiece, not shipped here): a
 * run of ASCII letters or digits a token per 4 characters or part of 4, any other character but a space a token,
 * and the 2 tokens the model adds to every text. English prose comes out near 4 characters a token, as published
 * for that tokenizer; CJK text one a character; text of few words (ids, base64) more than the estimate cairn uses.
 */
export function bgeTokens(text: string): number {
  let tokens = 2;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const word = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (word) {
      run++;
      continue;
    }
    tokens += Math.ceil(run / 4);
    run = 0;
    if (c !== 32 && c !== 10) tokens++;
  }
  return tokens + Math.ceil(run / 4);
}

export interface AiCall {
  texts: number;
  tokens: number;
  /** The error it answered with, or null for vectors. */
  refused: string | null;
}

/** Workers AI errors come back from the binding as thrown errors naming the internal code (errors page). */
class AiError extends Error {
  constructor(code: number, message: string) {
    super(`${code}: ${message}`);
    this.name = 'InferenceUpstreamError';
  }
}

export class FakeWorkersAi implements AiBinding {
  readonly calls: AiCall[] = [];
  /** Every call refused (no data centre answers). */
  down = false;
  /** Texts the model refuses: a call holding one fails as a whole. */
  refuses: (text: string) => boolean = () => false;

  async run(model: string, inputs: { text: string[]; truncate_inputs?: boolean }): Promise<unknown> {
    const texts = inputs.text;
    const tokens = Array.isArray(texts) ? texts.reduce((n, t) => n + bgeTokens(String(t)), 0) : 0;
    const refuse = (code: number, message: string): never => {
      this.calls.push({ texts: Array.isArray(texts) ? texts.length : 0, tokens, refused: `${code}` });
      throw new AiError(code, message);
    };
    if (model !== BGE_M3) refuse(5007, `No such model ${model} or task`);
    if (this.down) refuse(3040, 'No more data centers to forward the request to');
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > BGE_M3_MAX_TEXTS)
      refuse(3010, `Invalid or incomplete input for the model: text must hold 1 to ${BGE_M3_MAX_TEXTS} items`);
    if (texts.some((t) => typeof t !== 'string' || t.length === 0))
      refuse(3010, 'Invalid or incomplete input for the model: text items must not be empty');
    if (tokens > BGE_M3_WINDOW_TOKENS)
      refuse(3010, `Invalid or incomplete input for the model: ${tokens} tokens exceed the context window`);
    if (!inputs.truncate_inputs && texts.some((t) => bgeTokens(t) > BGE_M3_TEXT_TOKENS))
      refuse(3010, 'Invalid or incomplete input for the model: a text is longer than the model reads');
    if (texts.some((t) => this.refuses(t))) refuse(3010, 'Invalid or incomplete input for the model');
    this.calls.push({ texts: texts.length, tokens, refused: null });
    return {
      shape: [texts.length, 1024],
      data: texts.map((t) => [...embedText(t), ...new Array<number>(1024 - 256).fill(0)]),
      pooling: 'cls',
    };
  }
}
