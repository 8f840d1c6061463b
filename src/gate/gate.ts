// Server-side authoritative gate: the team's skipped tools and excluded-project globs, applied to every
// ingest event whatever the client decided. Pure: no I/O, no clock.
import { isPathExcluded } from '#shared/glob';

/** Tools whose calls never become observations unless the team sets its own list. */
export const DEFAULT_SKIPPED_TOOLS: readonly string[] = [
  'ListMcpResourcesTool',
  'SlashCommand',
  'Skill',
  'TodoWrite',
  'AskUserQuestion',
];

/** The part of the team settings the gate reads (keys as stored in `teams.settings`). */
export interface GateSettings {
  skipped_tools?: readonly string[] | null;
  excluded_projects?: readonly string[] | null;
}

export interface GateEvent {
  kind: 'init' | 'observation' | 'summarize' | 'end';
  /** Normalised project key from the client (`github.com/acme/widgets`, `local/app`). */
  project: string;
  cwd: string;
  tool_name?: string | null;
  /** Only `file_path` / `notebook_path` are looked at (session-memory meta files). */
  tool_input?: unknown;
  /** The client's home directory if known; otherwise `~` in a glob matches any usual home prefix. */
  home?: string | null;
}

export type GateDecision =
  | { allow: true }
  | { allow: false; reason: 'project_excluded' | 'tool_excluded' | 'session_memory_meta' };

const FILE_TOOLS = new Set(['Edit', 'Write', 'Read', 'NotebookEdit', 'MultiEdit']);

export function serverGate(settings: GateSettings, event: GateEvent): GateDecision {
  const globs = settings.excluded_projects ?? [];
  if (
    globs.length &&
    (isPathExcluded(event.cwd, globs, event.home) || isPathExcluded(event.project, globs, event.home))
  ) {
    return { allow: false, reason: 'project_excluded' };
  }
  if (event.kind !== 'observation') return { allow: true };
  const tool = event.tool_name ?? '';
  const skipped = settings.skipped_tools ?? DEFAULT_SKIPPED_TOOLS;
  if (skipped.includes(tool)) return { allow: false, reason: 'tool_excluded' };
  if (FILE_TOOLS.has(tool) && touchesSessionMemory(event.tool_input))
    return { allow: false, reason: 'session_memory_meta' };
  return { allow: true };
}

function touchesSessionMemory(input: unknown): boolean {
  let obj = input;
  if (typeof obj === 'string') {
    try {
      obj = JSON.parse(obj);
    } catch {
      return false;
    }
  }
  if (!obj || typeof obj !== 'object') return false;
  const rec = obj as Record<string, unknown>;
  return [rec.file_path, rec.notebook_path].some((p) => typeof p === 'string' && p.includes('session-memory'));
}
