// The observer's prompts: stable system prefix, session start/continuation, observation batch, summary request.
import type { Mode } from './modes';
import type { SummaryRequest, ToolEvent } from './types';
import type { SessionInfo } from './conversation';

export function buildSystemPrompt(_mode: Mode): string {
  return '';
}
export function buildSessionStart(_mode: Mode, _session: SessionInfo, _now: number): string {
  return '';
}
export function buildContinuation(_mode: Mode, _session: SessionInfo, _now: number): string {
  return '';
}
export function buildObservationMessage(_events: ToolEvent[]): string {
  return '';
}
export function buildSummaryMessage(_mode: Mode, _summary: SummaryRequest): string {
  return '';
}
