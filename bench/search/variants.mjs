// Query texts a search has not seen, for measuring hybrid search without the help of the query-vector cache
// (src/vectors/query-cache.ts): keyword search reads each rewording exactly as the original (FTS5 folds case,
// buildFtsQuery drops punctuation), the sentence model and the cache do not.

/** The k-th rewording of `q` (k ≥ 1): some words capitalised and a trailing mark; keyword search reads it as `q`. */
export function variant(q, k) {
  const words = q.split(' ');
  const casings = 2 ** words.length;
  const marks = ['', '?', '!', '.', '??', '...', ' ?', '!!', ':', ';', ',', ' !', '?!', '!?', ' .'];
  const cased = words.map((w, i) => (((k % casings) >> i) & 1 ? w[0].toUpperCase() + w.slice(1) : w)).join(' ');
  return cased + marks[Math.floor(k / casings) % marks.length];
}
