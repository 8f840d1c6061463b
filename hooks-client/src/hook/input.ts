// Claude Code's hook JSON (stdin) read leniently into one shape; unknown or malformed fields become absent.

export interface HookInput {
  sessionId: string | null;
  cwd: string;
  prompt: string | null;
  promptId: string | null;
  toolName: string | null;
  toolInput: unknown;
  toolResponse: unknown;
  /** PostToolUseFailure: what went wrong (Claude Code sends it instead of tool_response). */
  error: string | null;
  isInterrupt: boolean;
  toolUseId: string | null;
  transcriptPath: string | null;
  agentId: string | null;
  agentType: string | null;
  lastAssistantMessage: string | null;
  stopHookActive: boolean;
  reason: string | null;
  source: string | null;
}

const s = (v: unknown, max = 4096): string | null =>
  typeof v === 'string' && v.length > 0 && v.length <= max ? v : null;

export function parseHookInput(stdin: string, fallbackCwd: string): HookInput {
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(stdin || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
  } catch {
    // not JSON: treat as empty input; the hook will do nothing
  }
  return {
    sessionId: s(raw.session_id, 256) ?? s(raw.sessionId, 256) ?? s(raw.id, 256),
    cwd: s(raw.cwd) ?? fallbackCwd,
    prompt: typeof raw.prompt === 'string' ? raw.prompt : null,
    promptId: s(raw.prompt_id, 256),
    toolName: s(raw.tool_name, 256),
    toolInput: raw.tool_input ?? null,
    toolResponse: raw.tool_response ?? null,
    error: typeof raw.error === 'string' ? raw.error : null,
    isInterrupt: raw.is_interrupt === true,
    toolUseId: s(raw.tool_use_id, 256),
    transcriptPath: s(raw.transcript_path),
    // Agent fields are kept only when they look like ids, never as free text.
    agentId: s(raw.agent_id, 128),
    agentType: s(raw.agent_type, 128),
    lastAssistantMessage: typeof raw.last_assistant_message === 'string' ? raw.last_assistant_message : null,
    stopHookActive: raw.stop_hook_active === true,
    reason: s(raw.reason, 64),
    source: s(raw.source, 64),
  };
}
