// Gemini CLI (google-gemini/gemini-cli): hooks and MCP servers both in ~/.gemini/settings.json.
// Payload and output shapes: see adapters.ts and docs/agents.md (pinned from docs/hooks/reference.md).
import { join } from 'node:path';
import { addOurHooks, removeOurHooks, type PlannedHook, type Settings } from './settings-merge';
import { jsonEdit, withCairnEntry, type FileEdit } from './file-edit';

/** Gemini's names for cairn's events; it has no context injection before a tool runs. Timeouts in seconds here. */
export const GEMINI_PLAN: PlannedHook[] = [
  { claudeEvent: 'SessionStart', event: 'session-start', timeout: 10 },
  { claudeEvent: 'BeforeAgent', event: 'user-prompt-submit', timeout: 10 },
  { claudeEvent: 'AfterTool', event: 'post-tool-use', matcher: '.*', timeout: 10 },
  { claudeEvent: 'AfterAgent', event: 'stop', timeout: 10 },
  { claudeEvent: 'SessionEnd', event: 'session-end', timeout: 5 },
];

export function geminiEdits(home: string, clientPath: string, withMcp: boolean): FileEdit[] {
  // A local stdio server that forwards to cairn: the token stays in cairn's config, out of Gemini's.
  const server: Settings = { command: 'node', args: [clientPath, 'mcp-stdio'] };
  const add = (s: Settings) => {
    const hooked = addOurHooks(s, clientPath, { plan: GEMINI_PLAN, agent: 'gemini', timeoutUnitMs: 1 });
    return withMcp ? withCairnEntry(hooked, 'mcpServers', server) : hooked;
  };
  return [
    jsonEdit(join(home, '.gemini', 'settings.json'), add, (s) => withCairnEntry(removeOurHooks(s), 'mcpServers', null)),
  ];
}
