// Server-side authoritative gate: the team's skipped tools and excluded-project globs, applied to every
// ingest event whatever the client decided. Pure: no I/O, no clock.

/** Tools whose calls never become observations unless the team sets its own list. */
export const DEFAULT_SKIPPED_TOOLS: readonly string[] = ['ListMcpResourcesTool', 'SlashCommand', 'Skill', 'TodoWrite', 'AskUserQuestion'];

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
  if (globs.length && (isPathExcluded(event.cwd, globs, event.home) || isPathExcluded(event.project, globs, event.home))) {
    return { allow: false, reason: 'project_excluded' };
  }
  if (event.kind !== 'observation') return { allow: true };
  const tool = event.tool_name ?? '';
  const skipped = settings.skipped_tools ?? DEFAULT_SKIPPED_TOOLS;
  if (skipped.includes(tool)) return { allow: false, reason: 'tool_excluded' };
  if (FILE_TOOLS.has(tool) && touchesSessionMemory(event.tool_input)) return { allow: false, reason: 'session_memory_meta' };
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

// When the server does not know the client's home, `~` stands for any of the usual home prefixes.
const ANY_HOME = '(?:/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:/Users/[^/]+)';

const slashes = (p: string) => p.replace(/\\/g, '/');

/** Compiles one glob: `**` → any run, `*` → one segment's characters, `?` → one character; anchored. */
export function globToRegExp(glob: string, home?: string | null): RegExp {
  let g = slashes(glob.trim());
  let prefix = '';
  if (g === '~' || g.startsWith('~/')) {
    if (home) g = slashes(home).replace(/\/+$/, '') + g.slice(1);
    else {
      prefix = ANY_HOME;
      g = g.slice(1);
    }
  }
  let body = '';
  for (let i = 0; i < g.length; i++) {
    const ch = g[i]!;
    if (ch === '*' && g[i + 1] === '*') {
      body += '.*';
      i++;
    } else if (ch === '*') body += '[^/]*';
    else if (ch === '?') body += '[^/]';
    else body += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${prefix}${body}$`);
}

/** True when the path, or its last segment, matches any glob. Blank paths never match. */
export function isPathExcluded(path: string, globs: readonly string[], home?: string | null): boolean {
  const p = slashes(path.trim()).replace(/(.)\/+$/, '$1');
  if (!p) return false;
  const base = p.slice(p.lastIndexOf('/') + 1);
  return globs.some((glob) => {
    if (!glob.trim()) return false;
    const re = globToRegExp(glob, home);
    return re.test(p) || (base !== p && re.test(base));
  });
}

/** Splits a comma-separated glob list (the env/settings-file form) into clean entries. */
export const parseGlobList = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);
