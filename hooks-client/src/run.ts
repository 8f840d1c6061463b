// `cairn <command> …`: the one entry point, callable in-process (tests) as run(argv, io).
import { agentArg } from './agents/adapters';
import { runHook } from './hook/run-hook';
import type { Io } from './io';
import { terminalIo } from './util/terminal';
import { VERSION } from './version';

const USAGE = `cairn ${VERSION}: memory for coding agents

  cairn login --url <url> --token <token> [--device <name>]
  cairn install [--agent NAME] [--project] [--dry-run] [--no-mcp]
                                                     add cairn's hooks and MCP server to Claude Code
                                                     (or --agent codex, gemini, cursor, opencode)
  cairn uninstall [--agent NAME] [--project]         take them out again
  cairn status                                       server, token, project key, spool, last error
  cairn flush [--timeout <seconds>]                  send events kept while offline (default 120 s)
  cairn sender [--stop]                              the background sender hooks start (--stop ends it)
  cairn pause [--session ID | --folder PATH] [--hours N]
                                                     stop recording a session or folder (default: this folder)
  cairn resume [--session ID | --folder PATH]        record it again
  cairn capture [on|off]                             answer whether this checkout's sessions are recorded
  cairn statusline                                   Claude Code's status line (reads its JSON on stdin)
  cairn why [SESSION] [--json]                       the memories that went into a session (default: the
                                                     latest in this checkout) and their evidence
  cairn prime [--dry-run]                            first notes from this repository's docs headings,
                                                     recent commits and open TODOs (safe to repeat)
  cairn search <query> [--all | --project <key>] [--platform <agent>] [--limit N] [--json]
  cairn import <transcript.jsonl…> [--project <key>]
  cairn import --ndjson <file>                       a cairn export into this team (safe to repeat)
  cairn import --claude-mem [db] [--map NAME=KEY]…   claude-mem's history (default ~/.claude-mem/claude-mem.db)
  cairn export --output <file> [--project <key>]     the team's memory as NDJSON (admins)
  cairn export --personal --output <file>            your own (personal) memory as NDJSON
  cairn remember [--personal] "…"                    a note for this project's memory, or your own (--personal:
                                                     your sessions in every project, nobody else's)
  cairn forget <12|S12|P12> | --session <id> | --project <key> [--confirm N]
                                                     delete from the team's memory for good
  cairn continue <session id> | --last               the next agent session in this checkout starts where that
                                                     session stopped (yours on another machine, or a teammate's)
  cairn handoff [--session ID] "…"                   a note for whoever continues a session of yours
  cairn standup [--since 1d] [--team] [--project <key>] [--json]
                                                     what you (or the team) did, by project and person, with ids
  cairn supersede <12> [--by <13>] --reason "…"      mark a record outdated (replaced by #13); author or admin
  cairn feedback <12> wrong|outdated|useful [--reason "…"]   flag a record for review, or say it helped
  cairn history <12> [--diff <from>[:<to>]] [--json] every version of a record: who, when, why, what changed
  cairn edit <12> [--title …] [--narrative …] [--fact …]… [--concept …]… [--file …]… [--reason …]
                                                     change a record's text (a new version); author or admin
  cairn revert <12> --to <version> [--reason "…"]    put a record back as it was at that version
  cairn promote <12> [<40>…] [--to AGENTS.md|CLAUDE.md]
                                                     a patch adding the records as rules to the repository's
                                                     instruction file (you apply it); they leave the context index
  cairn admin …
  cairn hook <session-start|user-prompt-submit|pre-tool-use|post-tool-use|post-tool-use-failure|stop|pre-compact|session-end> [--agent claude-code|codex|gemini|cursor|opencode]
`;

type Command = (args: string[], io: Io) => Promise<number>;

// Loaded on demand: esbuild evaluates a dynamically imported module only when it is first used, so a hook
// (the hot path, once per tool call) never pays for the commands a person types now and then.
const COMMANDS: Record<string, () => Promise<Command>> = {
  login: async () => (await import('./commands/account')).login,
  status: async () => (await import('./commands/account')).status,
  flush: async () => (await import('./commands/account')).flush,
  sender: async () => (await import('./sender/sender')).sender,
  search: async () => (await import('./commands/account')).search,
  install: async () => (await import('./commands/install')).install,
  uninstall: async () => (await import('./commands/install')).uninstall,
  'mcp-headers': async () => (await import('./commands/install')).mcpHeaders,
  'mcp-stdio': async () => (await import('./agents/mcp-stdio')).mcpStdio,
  admin: async () => (await import('./commands/admin')).admin,
  import: async () => (await import('./commands/import-any')).importAny,
  export: async () => (await import('./commands/export')).exportNdjson,
  forget: async () => (await import('./commands/forget')).forget,
  pause: async () => (await import('./commands/pause')).pause,
  resume: async () => (await import('./commands/pause')).resume,
  capture: async () => (await import('./commands/capture')).capture,
  statusline: async () => (await import('./status/statusline')).statusline,
  why: async () => (await import('./commands/why')).why,
  prime: async () => (await import('./commands/prime')).prime,
  supersede: async () => (await import('./commands/supersede')).supersede,
  feedback: async () => (await import('./commands/supersede')).feedback,
  history: async () => (await import('./commands/versions')).history,
  edit: async () => (await import('./commands/versions')).edit,
  revert: async () => (await import('./commands/versions')).revert,
  remember: async () => (await import('./commands/remember')).remember,
  continue: async () => (await import('./commands/continue')).continueSession,
  handoff: async () => (await import('./commands/continue')).handoffNote,
  standup: async () => (await import('./commands/standup')).standup,
  promote: async () => (await import('./commands/promote')).promote,
};

/** Commands whose output is read by a program, not a person (see run). */
const RAW_OUTPUT = new Set(['mcp-headers', 'mcp-stdio', 'statusline']);

export async function run(argv: string[], io: Io, startedAt?: number): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'hook') return runHook(rest[0] ?? '', io, startedAt, agentArg(rest.slice(1)));
  if (command === '--version' || command === 'version') {
    io.out(`${VERSION}\n`);
    return 0;
  }
  const load = command && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) {
    (command && command !== 'help' && command !== '--help' ? io.err : io.out)(USAGE);
    return command && command !== 'help' && command !== '--help' ? 2 : 0;
  }
  // What a person reads goes through one filter: the server's and a repository's text is inert in a terminal.
  // Machine output is left alone: the MCP bridge and headers helper speak JSON to the agent, and the status line
  // filters the server's part itself (the user's own status line it wraps may colour its text).
  const out = RAW_OUTPUT.has(command) ? io : terminalIo(io);
  try {
    return await (await load())(rest, out);
  } catch (e) {
    out.err(`cairn ${command}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
