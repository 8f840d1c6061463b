// Corrects the model's file lists from what the batch's tool calls actually read and modified.
import type { ToolEvent } from './types';
import type { ObservationContent } from '#shared/wire/records';

export interface FileEvidence {
  read: string[];
  modified: string[];
}

const WRITE_TOOLS = new Set(['edit', 'multiedit', 'write', 'notebookedit', 'write_file', 'edit_file', 'create_file']);
const READ_TOOLS = new Set(['read', 'read_file', 'notebookread']);
const PATH_KEYS = ['file_path', 'filePath', 'notebook_path', 'notebookPath', 'path'];
const PATH_LIST_KEYS = ['filePaths', 'file_paths', 'paths'];

// Headers at a line start, or right after a quote when a cut-off JSON string was unescaped by hand.
const PATCH_HEADERS = [
  /(?:^|["'])\*\*\* (?:Update|Add|Delete) File:[ \t]*([^\n"]+?)[ \t]*(?=$|")/gm,
  /(?:^|["'])\*\*\* Move to:[ \t]*([^\n"]+?)[ \t]*(?=$|")/gm,
  /(?:^|["'])\+\+\+ b\/([^\n"]+?)[ \t]*(?=$|")/gm,
];

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Paths named by the usual file fields, including each entry of an `edits` list. */
function pathsFromObject(input: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of PATH_KEYS) if (typeof input[key] === 'string' && input[key]) out.push(input[key] as string);
  for (const key of PATH_LIST_KEYS) {
    const list = input[key];
    if (Array.isArray(list)) for (const p of list) if (typeof p === 'string' && p) out.push(p);
  }
  if (Array.isArray(input.edits))
    for (const edit of input.edits) if (isRecord(edit)) out.push(...pathsFromObject(edit));
  return out;
}

/** For inputs cut by truncation (no longer valid JSON): find `"file_path": "…"` style pairs in the text. */
function pathsFromText(text: string): string[] {
  const keys = [...PATH_KEYS, ...PATH_LIST_KEYS].join('|');
  const re = new RegExp(`"(?:${keys})"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'g');
  return [...text.matchAll(re)].map((m) => {
    try {
      return JSON.parse(`"${m[1]}"`) as string;
    } catch {
      return m[1]!;
    }
  });
}

function collectStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (isRecord(value)) for (const v of Object.values(value)) collectStrings(v, out);
  return out;
}

function pathsFromPatch(input: string): string[] {
  const parsed = parseJson(input);
  // Inside JSON the patch's newlines are escaped; parse when possible, else unescape them by hand.
  const texts = parsed === undefined ? [input.replace(/\\n/g, '\n')] : collectStrings(parsed);
  const out: string[] = [];
  for (const text of texts) for (const re of PATCH_HEADERS) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out;
}

const isPatchTool = (name: string) => /apply_?patch/i.test(name);

function pathsOf(event: ToolEvent): string[] {
  const parsed = parseJson(event.toolInput);
  return isRecord(parsed) ? pathsFromObject(parsed) : pathsFromText(event.toolInput);
}

/** What the batch's tool calls read and modified, in call order, without repeats. */
export function extractFileEvidence(events: ToolEvent[]): FileEvidence {
  const read: string[] = [];
  const modified: string[] = [];
  for (const event of events) {
    const name = event.toolName.toLowerCase();
    if (isPatchTool(name)) modified.push(...pathsFromPatch(event.toolInput));
    else if (WRITE_TOOLS.has(name)) modified.push(...pathsOf(event));
    else if (READ_TOOLS.has(name)) read.push(...pathsOf(event));
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
