// Tolerant parser for the observer's XML replies (observations, summary, skip_summary).
import type { Mode } from './modes';
import type { ParseResult } from './types';

export function parseObserverOutput(_raw: unknown, _mode: Mode): ParseResult {
  return { valid: false };
}
