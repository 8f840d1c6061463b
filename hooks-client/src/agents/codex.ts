// Codex (openai/codex): hooks in $CODEX_HOME/hooks.json (default ~/.codex), the MCP server in config.toml.
// Payload and output shapes: see adapters.ts and docs/agents.md (pinned from codex-rs/hooks/schema/generated).
import { join } from 'node:path';
import { addOurHooks, removeOurHooks, type PlannedHook } from './settings-merge';
import type { Io } from '../io';
import { jsonEdit, markedBlockEdit, type FileEdit } from './file-edit';

/** Codex has no SessionEnd and no file-read tool of its own (it reads files through the shell). */
export const CODEX_PLAN: PlannedHook[] = [
  { claudeEvent: 'SessionStart', event: 'session-start', matcher: 'startup|resume|clear', timeout: 10 },
  { claudeEvent: 'UserPromptSubmit', event: 'user-prompt-submit', timeout: 10 },
  { claudeEvent: 'PostToolUse', event: 'post-tool-use', timeout: 10 },
  { claudeEvent: 'Stop', event: 'stop', timeout: 10 },
];

export const codexHome = (env: Io['env'], home: string): string => env.CODEX_HOME?.trim() || join(home, '.codex');

/** A TOML basic string (JSON's escapes are TOML's). */
const tomlString = (s: string): string => JSON.stringify(s);

export function codexEdits(env: Io['env'], home: string, clientPath: string, withMcp: boolean): FileEdit[] {
  const dir = codexHome(env, home);
  const edits = [
    jsonEdit(
      join(dir, 'hooks.json'),
      (s) => addOurHooks(s, clientPath, { plan: CODEX_PLAN, agent: 'codex' }),
      removeOurHooks,
    ),
  ];
  if (withMcp) {
    // A local stdio server that forwards to cairn: the token stays in cairn's config, out of Codex's.
    const block = `[mcp_servers.cairn]\ncommand = "node"\nargs = [${tomlString(clientPath)}, "mcp-stdio"]\n`;
    edits.push(markedBlockEdit(join(dir, 'config.toml'), block));
  }
  return edits;
}
