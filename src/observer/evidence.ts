// Corrects the model's file lists from what the batch's tool calls actually read and modified.
import type { ToolEvent } from './types';
import type { ObservationContent } from '#shared/wire/records';
import { toolFiles } from '#shared/tool-files';

export interface FileEvidence {
  read: string[];
  modified: string[];
}

/** What the batch's tool calls read and modified, in call order, without repeats. */
export function extractFileEvidence(events: ToolEvent[]): FileEvidence {
  const read: string[] = [];
  const modified: string[] = [];
  for (const event of events) {
    const files = toolFiles(event.toolName, event.toolInput);
    read.push(...files.read);
    modified.push(...files.modified);
  }
  return { read: [...new Set(read)], modified: [...new Set(modified)] };
}

/**
 * files_modified never names a file the batch did not modify (a model cannot invent an edit): the model's
 * claims that the evidence confirms are kept; when it confirms none, the observation gets every modified file
 * of the batch. files_read is the read evidence followed by the model's own claims, without repeats.
 */
export function correctFileLists(observations: ObservationContent[], events: ToolEvent[]): ObservationContent[] {
  const evidence = extractFileEvidence(events);
  const modified = new Set(evidence.modified);
  return observations.map((obs) => {
    const confirmed = obs.filesModified.filter((f) => modified.has(f));
    return {
      ...obs,
      filesModified: confirmed.length > 0 ? [...new Set(confirmed)] : [...evidence.modified],
      filesRead: [...new Set([...evidence.read, ...obs.filesRead])],
    };
  });
}
