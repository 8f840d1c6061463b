// `cairn hook <event> --agent NAME`: each agent's hook payload read into the shape the hook handlers read
// (Claude Code's field names), and cairn's answer written back the way that agent reads hook output.
// Shapes are pinned from each agent's source; docs/agents.md cites the versions.
import { cursorAdapter } from './cursor';
import { opencodeAdapter } from './opencode';
import { parseObject, renamedTool, type Adapter, type Raw } from './payload';

export const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'opencode'] as const;
export type AgentName = (typeof AGENTS)[number];

// Claude Code is the reference shape: nothing to translate.
const claudeCode: Adapter = {
  platform: 'claude-code',
  input: (event, stdin) => ({ event, stdin }),
  output: (out) => out,
};

// Codex's hook payloads use Claude Code's field names (session_id, cwd, prompt, tool_name, tool_input,
// tool_response, tool_use_id, last_assistant_message, stop_hook_active, source) and read the same
// hookSpecificOutput.additionalContext on SessionStart and UserPromptSubmit.
const codex: Adapter = { platform: 'codex', input: (event, stdin) => ({ event, stdin }), output: (out) => out };

/** Text of Gemini's llmContent: a string, a Part ({text}) or a list of them. */
function partsText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(partsText).filter(Boolean).join('\n');
  if (v && typeof v === 'object' && typeof (v as Raw).text === 'string') return (v as Raw).text as string;
  return '';
}

/**
 * Gemini's built-in tools under Claude Code's names (packages/core/src/tools/definitions/base-declarations.ts):
 * their arguments already match (command, file_path, old_string/new_string, content), so the observer and the
 * file tracking read them like Claude Code's. Other tools (MCP, …) keep their own names.
 */
const GEMINI_TOOLS: Record<string, string> = {
  run_shell_command: 'Bash',
  read_file: 'Read',
  write_file: 'Write',
  replace: 'Edit',
  glob: 'Glob',
  grep_search: 'Grep',
  list_directory: 'LS',
  web_fetch: 'WebFetch',
};
const geminiTool = (name: unknown): unknown => renamedTool(GEMINI_TOOLS, name);

// Gemini CLI: BeforeAgent (prompt), AfterTool (tool_response = {llmContent, returnDisplay, error}),
// AfterAgent (prompt_response, stop_hook_active), SessionStart (source), SessionEnd (reason).
const gemini: Adapter = {
  platform: 'gemini',
  input(event, stdin) {
    const raw = parseObject(stdin);
    const base: Raw = { session_id: raw.session_id, cwd: raw.cwd, transcript_path: raw.transcript_path };
    switch (event) {
      case 'post-tool-use':
      case 'post-tool-use-failure': {
        const response = (raw.tool_response && typeof raw.tool_response === 'object' ? raw.tool_response : {}) as Raw;
        const tool = { ...base, tool_name: geminiTool(raw.tool_name), tool_input: raw.tool_input };
        const error =
          response.error && typeof response.error === 'object' ? (response.error as Raw).message : response.error;
        if (error)
          return {
            event: 'post-tool-use-failure',
            stdin: JSON.stringify({ ...tool, error: typeof error === 'string' ? error : 'the tool call failed' }),
          };
        const text = partsText(response.llmContent) || partsText(response.returnDisplay);
        return { event: 'post-tool-use', stdin: JSON.stringify({ ...tool, tool_response: text }) };
      }
      case 'stop':
        return {
          event,
          stdin: JSON.stringify({
            ...base,
            last_assistant_message: raw.prompt_response,
            stop_hook_active: raw.stop_hook_active,
          }),
        };
      case 'user-prompt-submit':
        return { event, stdin: JSON.stringify({ ...base, prompt: raw.prompt }) };
      case 'session-start':
        return { event, stdin: JSON.stringify({ ...base, source: raw.source }) };
      case 'session-end':
        return { event, stdin: JSON.stringify({ ...base, reason: raw.reason }) };
      default:
        return { event, stdin: JSON.stringify(base) };
    }
  },
  output(out) {
    const { hookEventName, additionalContext } = out.hookSpecificOutput;
    // Gemini names the prompt event BeforeAgent; it has no context injection before a tool runs.
    const name =
      hookEventName === 'UserPromptSubmit' ? 'BeforeAgent' : hookEventName === 'SessionStart' ? 'SessionStart' : null;
    return name ? { hookSpecificOutput: { hookEventName: name, additionalContext } } : null;
  },
};

const ADAPTERS: Record<AgentName, Adapter> = {
  'claude-code': claudeCode,
  codex,
  gemini,
  cursor: cursorAdapter,
  opencode: opencodeAdapter,
};

export const adapterFor = (name: string): Adapter | null =>
  Object.hasOwn(ADAPTERS, name) ? ADAPTERS[name as AgentName] : null;

/** `--agent NAME` or `--agent=NAME` among a hook's arguments; Claude Code when absent. */
export function agentArg(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--agent') return args[i + 1] ?? '';
    if (args[i]!.startsWith('--agent=')) return args[i]!.slice('--agent='.length);
  }
  return 'claude-code';
}
