// `cairn <command> …`: the one entry point, callable in-process (tests) as run(argv, io).
import { admin } from './commands/admin';
import { flush, login, search, status } from './commands/account';
import { importTranscripts } from './commands/import';
import { install, mcpHeaders, uninstall } from './commands/install';
import { runHook } from './hook/run-hook';
import type { Io } from './io';
import { VERSION } from './version';

const USAGE = `cairn ${VERSION}: memory for coding agents

  cairn login --url <url> --token <token> [--device <name>]
  cairn install [--project] [--dry-run] [--no-mcp]   add cairn's hooks and MCP server to Claude Code
  cairn uninstall [--project]                        take them out again
  cairn status                                       server, token, project key, spool, last error
  cairn flush                                        send events kept while offline
  cairn search <query> [--all] [--json]
  cairn import <transcript.jsonl…> [--project <key>]
  cairn admin …
  cairn hook <session-start|user-prompt-submit|pre-tool-use|post-tool-use|stop|session-end>
`;

type Command = (args: string[], io: Io) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  login, status, flush, search, install, uninstall, admin,
  import: importTranscripts,
  'mcp-headers': mcpHeaders,
};

export async function run(argv: string[], io: Io, startedAt?: number): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'hook') return runHook(rest[0] ?? '', io, startedAt);
  if (command === '--version' || command === 'version') {
    io.out(`${VERSION}\n`);
    return 0;
  }
  const fn = command ? COMMANDS[command] : undefined;
  if (!fn) {
    (command && command !== 'help' && command !== '--help' ? io.err : io.out)(USAGE);
    return command && command !== 'help' && command !== '--help' ? 2 : 0;
  }
  try {
    return await fn(rest, io);
  } catch (e) {
    io.err(`cairn ${command}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
