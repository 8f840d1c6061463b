// Installs claude-mem and bun (pinned in scripts/tools/claude-mem) into .tools/claude-mem before the Node files
// run, for the import tests; first run only. They are not devDependencies, so `npm install` stays lean.
// @ts-expect-error plain ESM script without types
import { ensureTool } from '../../scripts/tools.mjs';

export default function setup(): void {
  ensureTool('claude-mem');
}
