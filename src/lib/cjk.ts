// CJK indexing for FTS5: unicode61 keeps a run of Han/Kana/Hangul as one token, so "用户身份" would only match
// the whole run. We index overlapping bigrams of every CJK run in a shadow column instead; queries are
// turned into the same bigrams (as a phrase), so 2-character terms and longer phrases both match.

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC]+/gu;

export const hasCjk = (text: string) => CJK.test(text);

/** Overlapping bigrams of one CJK run; a single character stays as itself. */
export function bigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length < 2) return chars;
  const out: string[] = [];
  for (let i = 0; i < chars.length - 1; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/**
 * The shadow-column text for a document: bigrams of each CJK run, plus the Latin/digit words that were glued
 * to CJK characters (e.g. "修复bug" also yields "bug"), space-separated. Empty when the text has no CJK.
 */
export function cjkTerms(...texts: (string | null | undefined)[]): string {
  const out: string[] = [];
  for (const text of texts) {
    if (!text || !hasCjk(text)) continue;
    for (const token of text.split(/[^\p{L}\p{N}_]+/u)) {
      if (!hasCjk(token)) continue;
      for (const part of token.split(
        /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC]+)/u,
      )) {
        if (!part) continue;
        if (hasCjk(part)) out.push(...bigrams(part));
        else out.push(part.toLowerCase());
      }
    }
  }
  return out.join(' ');
}

/** Splits text into CJK runs and the rest, in order. */
export function splitCjkRuns(text: string): { cjk: boolean; text: string }[] {
  const parts: { cjk: boolean; text: string }[] = [];
  let last = 0;
  for (const m of text.matchAll(CJK_RUN)) {
    if (m.index! > last) parts.push({ cjk: false, text: text.slice(last, m.index) });
    parts.push({ cjk: true, text: m[0] });
    last = m.index! + m[0].length;
  }
  if (last < text.length) parts.push({ cjk: false, text: text.slice(last) });
  return parts;
}
