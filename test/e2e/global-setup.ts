// Installs the pinned Claude Code CLI into .tools/claude-code before any e2e test runs (first run only; it is
// not a devDependency, so `npm install` stays lean). Its own time, not a test's timeout.
// @ts-expect-error plain ESM script without types
import { ensureTool } from '../../scripts/tools.mjs';

export default function setup(): void {
  ensureTool('claude-code');
}
