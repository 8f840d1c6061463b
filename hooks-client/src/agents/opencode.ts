// OpenCode: no hook commands, but plugins. `cairn install --agent opencode` writes a small plugin into
// OpenCode's global plugin folder that hands each payload to `cairn hook <event> --agent opencode`, and the
// MCP server into its global opencode.json. Shapes pinned from @opencode-ai/plugin and @opencode-ai/sdk 1.18.33
// and OpenCode's docs (plugins.mdx, mcp-servers.mdx); docs/agents.md cites them.
import { join } from 'node:path';
import type { Settings } from './settings-merge';
import type { Io } from '../io';
import { jsonEdit, withCairnEntry, type FileEdit } from './file-edit';
import { opencodePluginSource, PLUGIN_MARK } from './opencode-plugin';
import { isRaw, parseObject, renamedTool, sessionEvent, type Adapter, type Raw } from './payload';

/** OpenCode's global config folder: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode (it uses xdg-basedir). */
export const opencodeConfigDir = (env: Io['env'], home: string): string =>
  join(env.XDG_CONFIG_HOME?.trim() || join(home, '.config'), 'opencode');

/** A file that is wholly cairn's: written whole, and taken out whole (the user's earlier file, if any, comes back). */
function wholeFileEdit(path: string, text: string): FileEdit {
  const ours = (t: string) => t.includes(PLUGIN_MARK);
  return {
    path,
    add: () => text,
    remove: (before) => (ours(before) ? '' : before),
    // Once cairn's file is out, nothing of it is left to merge: a backed-up earlier file comes back as it was.
    same: (a, b) => a === b || a === '',
    empty: (t) => !t.trim(),
  };
}

export function opencodeEdits(env: Io['env'], home: string, clientPath: string, withMcp: boolean): FileEdit[] {
  const dir = opencodeConfigDir(env, home);
  const edits = [wholeFileEdit(join(dir, 'plugins', 'cairn.js'), opencodePluginSource(clientPath))];
  if (withMcp) {
    // A local stdio server that forwards to cairn: the token stays in cairn's config, out of OpenCode's.
    const server: Settings = { type: 'local', command: ['node', clientPath, 'mcp-stdio'], enabled: true };
    edits.push(
      jsonEdit(
        join(dir, 'opencode.json'),
        (s) => withCairnEntry(s, 'mcp', server),
        (s) => withCairnEntry(s, 'mcp', null),
      ),
    );
  }
  return edits;
}

/** OpenCode's built-in tools (packages/opencode/src/tool/*.ts ids) under Claude Code's names. */
const OPENCODE_TOOLS: Record<string, string> = {
  bash: 'Bash',
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  glob: 'Glob',
  grep: 'Grep',
  list: 'LS',
  webfetch: 'WebFetch',
};
/** Their camelCase arguments under Claude Code's names, so file tracking reads file_path as it does for Claude Code. */
const OPENCODE_ARGS: Record<string, string> = {
  filePath: 'file_path',
  oldString: 'old_string',
  newString: 'new_string',
  replaceAll: 'replace_all',
};

function toolInput(tool: unknown, args: unknown): unknown {
  if (typeof tool !== 'string' || !Object.hasOwn(OPENCODE_TOOLS, tool) || !isRaw(args)) return args;
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [Object.hasOwn(OPENCODE_ARGS, k) ? OPENCODE_ARGS[k]! : k, v]),
  );
}

/** The prompt's text: the user's text parts (OpenCode's own synthetic parts, such as file attachments' contents, left out). */
function promptText(parts: unknown): string | null {
  if (!Array.isArray(parts)) return null;
  return parts
    .filter((p): p is Raw => isRaw(p) && p.type === 'text' && typeof p.text === 'string' && p.synthetic !== true)
    .map((p) => p.text as string)
    .join('\n');
}

/**
 * What the plugin sends (opencode-plugin.ts): `directory` from the plugin input, and per event the hook's own
 * arguments: chat.message {input: {sessionID, messageID}, output: {parts}}; tool.execute.after {input: {tool,
 * sessionID, callID, args}, output: {title, output, metadata}}; session start/idle/end {sessionID} (idle adds
 * the last assistant text it saw on the event bus).
 */
export const opencodeAdapter: Adapter = {
  platform: 'opencode',
  input(event, stdin) {
    const raw = parseObject(stdin);
    const input = isRaw(raw.input) ? raw.input : {};
    const output = isRaw(raw.output) ? raw.output : {};
    const base: Raw = { session_id: raw.sessionID ?? input.sessionID, cwd: raw.directory };
    switch (event) {
      case 'user-prompt-submit':
        return {
          event,
          stdin: JSON.stringify({ ...base, prompt: promptText(output.parts), prompt_id: input.messageID }),
        };
      case 'post-tool-use': {
        const tool = {
          ...base,
          tool_name: renamedTool(OPENCODE_TOOLS, input.tool),
          tool_input: toolInput(input.tool, input.args),
          tool_use_id: input.callID,
        };
        return {
          event,
          stdin: JSON.stringify({ ...tool, tool_response: typeof output.output === 'string' ? output.output : '' }),
        };
      }
      default:
        return sessionEvent(event, base, raw);
    }
  },
  // Only the session's context goes back: the plugin adds it to the system prompt of the session's turns.
  output: (out) =>
    out.hookSpecificOutput.hookEventName === 'SessionStart'
      ? { context: out.hookSpecificOutput.additionalContext }
      : null,
};
