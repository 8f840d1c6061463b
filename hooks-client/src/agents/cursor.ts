// Cursor: hooks in ~/.cursor/hooks.json (its own flat shape), the MCP server in ~/.cursor/mcp.json, and its
// hook payloads read into cairn's events. Shapes pinned from Cursor's own code (the hook runner bundled in
// @cursor/sdk 1.0.32) and cursor/cookbook's hooks example; docs/agents.md cites them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookCommand, isOurHandler, type PlannedHook, type Settings } from './settings-merge';
import { jsonEdit, parseJsonObject, withCairnEntry, type FileEdit } from './file-edit';
import { isRaw, jsonOrText, parseObject, renamedTool, sessionEvent, type Adapter, type Raw } from './payload';

/**
 * Cursor's names for cairn's events. Its `stop` carries no text (status, loop_count), so the turn's summary
 * comes from afterAgentResponse, which carries the agent's answer. Timeouts in seconds, as Cursor reads them.
 */
export const CURSOR_PLAN: PlannedHook[] = [
  { claudeEvent: 'sessionStart', event: 'session-start', timeout: 10 },
  { claudeEvent: 'beforeSubmitPrompt', event: 'user-prompt-submit', timeout: 10 },
  { claudeEvent: 'preToolUse', event: 'pre-tool-use', matcher: 'Read', timeout: 5 },
  { claudeEvent: 'postToolUse', event: 'post-tool-use', timeout: 10 },
  { claudeEvent: 'postToolUseFailure', event: 'post-tool-use-failure', timeout: 10 },
  { claudeEvent: 'afterAgentResponse', event: 'stop', timeout: 10 },
  { claudeEvent: 'sessionEnd', event: 'session-end', timeout: 5 },
];

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Takes cairn's entries out of Cursor's `{version, hooks: {event: [{command, …}]}}`, leaving everything else. */
export function removeCursorHooks(s: Settings): Settings {
  const next = clone(s);
  if (!isRaw(next.hooks)) return next;
  const hooks = next.hooks as Settings;
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    const kept = list.filter((h) => !isOurHandler(h));
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  if (!Object.keys(hooks).length) delete next.hooks;
  return next;
}

export function addCursorHooks(s: Settings, clientPath: string): Settings {
  const next = removeCursorHooks(s);
  const hooks = (isRaw(next.hooks) ? next.hooks : {}) as Settings;
  for (const p of CURSOR_PLAN) {
    const entry: Settings = { command: hookCommand(clientPath, p.event, 'cursor'), timeout: p.timeout };
    if (p.matcher) entry.matcher = p.matcher;
    hooks[p.claudeEvent] = [
      ...(Array.isArray(hooks[p.claudeEvent]) ? (hooks[p.claudeEvent] as Settings[]) : []),
      entry,
    ];
  }
  // A new file says which hooks format it uses; a user's file keeps exactly the keys it had.
  return Object.keys(next).length ? { ...next, hooks } : { version: 1, hooks };
}

/** hooks.json: a file cairn created is deleted again when only its `version` is left. */
function hooksFileEdit(path: string, clientPath: string): FileEdit {
  const edit = jsonEdit(path, (s) => addCursorHooks(s, clientPath), removeCursorHooks);
  const onlyVersion = (text: string) => {
    const keys = Object.keys(parseJsonObject(text, path));
    return keys.length === 0 || (keys.length === 1 && keys[0] === 'version');
  };
  return { ...edit, empty: onlyVersion };
}

/** Whether `cairn install --agent cursor` put its hooks into ~/.cursor/hooks.json (read only when Cursor runs a hook). */
export function cursorHooksInstalled(home: string): boolean {
  try {
    return readFileSync(join(home, '.cursor', 'hooks.json'), 'utf8').includes('--agent cursor');
  } catch {
    return false;
  }
}

/**
 * Cursor also runs Claude Code's hooks (from ~/.claude/settings.json), with its own payloads, which carry
 * cursor_version (Claude Code's never do): such a run is read as Cursor's, or skipped (null) when cairn's own
 * Cursor hooks are installed and record the same session. Claude Code's payloads are parsed here only in the
 * rare case that their text mentions the field.
 */
export function agentUnderCursor(agent: string, stdin: string, home: string): string | null {
  if (
    agent !== 'claude-code' ||
    !stdin.includes('"cursor_version"') ||
    typeof parseObject(stdin).cursor_version !== 'string'
  )
    return agent;
  return cursorHooksInstalled(home) ? null : 'cursor';
}

export function cursorEdits(home: string, clientPath: string, withMcp: boolean): FileEdit[] {
  const dir = join(home, '.cursor');
  const edits = [hooksFileEdit(join(dir, 'hooks.json'), clientPath)];
  if (withMcp) {
    // A local stdio server that forwards to cairn: the token stays in cairn's config, out of Cursor's.
    const server: Settings = { command: 'node', args: [clientPath, 'mcp-stdio'] };
    edits.push(
      jsonEdit(
        join(dir, 'mcp.json'),
        (s) => withCairnEntry(s, 'mcpServers', server),
        (s) => withCairnEntry(s, 'mcpServers', null),
      ),
    );
  }
  return edits;
}

/** Cursor's built-in tools (the toolName of each of its executors) under Claude Code's names where the arguments match. */
const CURSOR_TOOLS: Record<string, string> = {
  Shell: 'Bash',
  Read: 'Read',
  Write: 'Write',
  Grep: 'Grep',
  List: 'LS',
  Fetch: 'WebFetch',
};

/** A tool's output: Cursor sends it as JSON text; a shell call's is `{output, exitCode}`, of which the output is the text. */
function toolResponse(v: unknown): unknown {
  const parsed = jsonOrText(v);
  return isRaw(parsed) && typeof parsed.output === 'string' ? parsed.output : (parsed ?? '');
}

/**
 * Every Cursor payload carries conversation_id (also as session_id), generation_id, model, hook_event_name,
 * cursor_version, workspace_roots, user_email and transcript_path; the shell tools add cwd.
 * The transcript is Cursor's own format, so it is not passed on as a Claude Code transcript.
 */
export const cursorAdapter: Adapter = {
  platform: 'cursor',
  input(event, stdin) {
    const raw = parseObject(stdin);
    const roots = Array.isArray(raw.workspace_roots) ? raw.workspace_roots : [];
    const cwd =
      typeof raw.cwd === 'string' && raw.cwd ? raw.cwd : roots.find((r): r is string => typeof r === 'string');
    const base: Raw = { session_id: raw.conversation_id ?? raw.session_id, cwd };
    const tool = {
      ...base,
      tool_name: renamedTool(CURSOR_TOOLS, raw.tool_name),
      tool_input: jsonOrText(raw.tool_input),
      tool_use_id: raw.tool_use_id,
    };
    switch (event) {
      case 'user-prompt-submit':
        return { event, stdin: JSON.stringify({ ...base, prompt: raw.prompt }) };
      case 'pre-tool-use':
        return { event, stdin: JSON.stringify(tool) };
      case 'post-tool-use':
        return { event, stdin: JSON.stringify({ ...tool, tool_response: toolResponse(raw.tool_output) }) };
      case 'post-tool-use-failure':
        return { event, stdin: JSON.stringify({ ...tool, error: raw.error_message, is_interrupt: raw.is_interrupt }) };
      default:
        return sessionEvent(event, base, raw);
    }
  },
  // sessionStart, beforeSubmitPrompt and preToolUse all read a top-level additional_context.
  output: (out) => ({ additional_context: out.hookSpecificOutput.additionalContext }),
};
