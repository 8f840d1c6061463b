// Which files a tool call read and which it changed, from its name and input: the observer corrects the model's
// file lists with it (src/observer/evidence.ts) and the hooks client takes the ids of those files (issue 34). Pure.

export interface ToolFiles {
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

function pathsOf(input: unknown): string[] {
  if (isRecord(input)) return pathsFromObject(input);
  if (typeof input !== 'string') return [];
  const parsed = parseJson(input);
  return isRecord(parsed) ? pathsFromObject(parsed) : pathsFromText(input);
}

/** What one call read and modified, as the agent named the paths, in input order, without repeats. */
export function toolFiles(toolName: string, input: unknown): ToolFiles {
  const name = toolName.toLowerCase();
  const text = typeof input === 'string' ? input : input === undefined || input === null ? '' : JSON.stringify(input);
  const read: string[] = [];
  const modified: string[] = [];
  if (isPatchTool(name)) modified.push(...pathsFromPatch(text));
  else if (WRITE_TOOLS.has(name)) modified.push(...pathsOf(input));
  else if (READ_TOOLS.has(name)) read.push(...pathsOf(input));
  return { read: [...new Set(read)], modified: [...new Set(modified)] };
}
