// Imported first by boot.ts: on a Node too old for the client, say so in one line instead of a stack trace.
// No node: imports here (the bundle turns those into process.getBuiltinModule calls, the very thing missing).
import { nodeVersionProblem } from './node-version';

const problem = nodeVersionProblem(process.versions.node, typeof process.getBuiltinModule === 'function');
if (problem) {
  process.stderr.write(`${problem}\n`);
  // A hook must never stop the agent: exit 0 there, so Claude Code goes on (the line lands in its debug log).
  process.exit(process.argv[2] === 'hook' ? 0 : 1);
}
