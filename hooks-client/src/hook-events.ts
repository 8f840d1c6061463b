// The words the hook runner and the agent adapters share: cairn's own event names, and the JSON a hook prints
// back to Claude Code. Both folders import it; neither imports the other's internals for these.
export type HookEvent =
  | 'session-start'
  | 'user-prompt-submit'
  | 'pre-tool-use'
  | 'post-tool-use'
  | 'post-tool-use-failure'
  | 'stop'
  | 'pre-compact'
  | 'session-end';

export interface HookOutput {
  hookSpecificOutput: { hookEventName: 'SessionStart' | 'UserPromptSubmit' | 'PreToolUse'; additionalContext: string };
  /** Shown to the user by Claude Code (a warning the agent's context alone might not pass on). */
  systemMessage?: string;
}
