// The slash commands' `allowed-tools` (issue 37): each command's turn may run exactly its own client command, not
// any node program. Matched the way Claude Code reads a Bash rule: `Bash(cmd)` exactly, `Bash(prefix:*)` a prefix.
import { describe, expect, it } from 'vitest';
import { commandFiles } from '../../src/agents/claude-commands';

const CLIENTS = ['/home/ada/.local/share/cairn/cairn.cjs', '${CLAUDE_PLUGIN_ROOT}/scripts/cairn.cjs'];

/** The Bash rules a command file grants, and the `!` lines it runs. */
function parts(file: string): { rules: string[]; runs: string[] } {
  const front = /^---\n([\s\S]*?)\n---\n/.exec(file)![1]!;
  const tools = /^allowed-tools: (.*)$/m.exec(front)?.[1] ?? '';
  const rules = [...tools.matchAll(/Bash\((.*?)\)(?:,|$)/g)].map((m) => m[1]!);
  // `!` lines run the client themselves; a model-invoked command (handoff) shows the agent the one line to run.
  const runs = [...file.matchAll(/^!`(.*)`$/gm), ...file.matchAll(/^(node ".*)$/gm)].map((m) => m[1]!);
  return { rules, runs };
}

const allows = (rule: string, command: string) =>
  rule.endsWith(':*') ? command.startsWith(rule.slice(0, -2)) : command === rule;

describe('the slash commands’ allowed tools', () => {
  for (const client of CLIENTS) {
    it(`grant exactly the client command each runs (${client.startsWith('$') ? 'plugin' : 'cairn install'})`, () => {
      const files = Object.entries(commandFiles(client)).filter(([, f]) => f.includes('allowed-tools'));
      expect(files.map(([name]) => name).sort()).toEqual([
        'capture.md',
        'forget.md',
        'handoff.md',
        'pause.md',
        'prime.md',
        'promote.md',
        'resume.md',
        'status.md',
      ]);
      for (const [name, file] of files) {
        const { rules, runs } = parts(file);
        const sub = name.replace(/\.md$/, '');
        expect(rules, name).toHaveLength(1);
        expect(rules[0], name).toMatch(new RegExp(`^node "${client.replace(/[$.{}/]/g, '\\$&')}" ${sub}(:\\*)?$`));
        // What the command runs, with the user's arguments in, is allowed …
        for (const line of runs) {
          const filled = line
            .replace('$ARGUMENTS', '2 folder')
            .replace('${CLAUDE_SESSION_ID}', 'sess-1')
            .replace('<the note>', 'Stopped before the Redis store')
            .replace('<the ids>', '12 40');
          expect(allows(rules[0]!, filled), `${name}: ${filled}`).toBe(true);
        }
        // … and nothing else the turn might try.
        for (const other of [
          "node -e \"require('fs').readFileSync('/etc/passwd')\"",
          `node "${client}" admin tokens`,
          'node --version',
        ])
          expect(allows(rules[0]!, other), `${name}: ${other}`).toBe(false);
      }
    });
  }
});
