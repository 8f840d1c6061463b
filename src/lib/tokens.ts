// How many tokens a text may take, without a tokenizer: the observer's window (src/observer/window.ts) and the
// embedder's batches (src/vectors/workers-ai-embedder.ts) are sized with it.

/**
 * Tokens `text` may take at most, without a tokenizer: three ASCII characters a token (code and JSON run about
 * 3.5 to 4 with the BPE tokenizers of these models), any other UTF-16 unit a token of its own (CJK text runs
 * about one a character). Linear in the text.
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 128) ascii++;
  return Math.ceil(ascii / 3) + (text.length - ascii);
}
