// `cairn hook <event>` in the full client: everything but the quick path (boot.ts answers async hooks alone).
// Every hook that sends (all but pre-tool-use) first drains the inbox into the spool, so what the quick hooks
// left goes out before, and in order with, this hook's own event, whether or not a sender is running.
import { keepPluginLogin, pathsFor } from '../config';
import { ensureSender } from '../inbox/quick';
import type { Io } from '../io';
import { BUNDLED } from '../version';
import { BUDGET_MS } from './context';
import { drainInbox } from './drain';
import type { HookEvent } from '../hook-events';
import { handleHook } from './handle';

/** How long a hook waits for another process (the sender) to finish draining before going on without. */
const DRAIN_WAIT_MS = 300;

/** Hooks that make sure the sender runs: its HTTP door must be open before the tool calls of the turn POST to it. */
const STARTS_SENDER = new Set(['session-start', 'user-prompt-submit']);

/** Always resolves to exit code 0: a memory system must never stop the agent. */
export async function runHook(event: string, io: Io, startedAt = io.now(), agent = 'claude-code'): Promise<number> {
  // One stat when a sender runs; process.argv[1] is the client only in the built file (never under tests).
  if (
    STARTS_SENDER.has(event) &&
    agent === 'claude-code' &&
    BUNDLED &&
    process.argv[1] &&
    io.env.CAIRN_SENDER !== 'off' &&
    io.env.CAIRN_INTERNAL !== '1'
  ) {
    ensureSender(pathsFor(io.env).stateDir, process.argv[1]);
  }
  if (event === 'session-start' && io.env.CLAUDE_PLUGIN_OPTION_TOKEN) {
    try {
      keepPluginLogin(io.env, pathsFor(io.env));
    } catch {
      // the plugin's slash commands then ask for `cairn login`; the hook goes on
    }
  }
  if (event !== 'pre-tool-use' && Object.hasOwn(BUDGET_MS, event)) {
    try {
      await drainInbox(pathsFor(io.env).stateDir, io.env, startedAt + BUDGET_MS[event as HookEvent] / 2, DRAIN_WAIT_MS);
    } catch {
      // the inbox stays for the sender or the next hook; this hook's own event still goes out
    }
  }
  return handleHook(event, io, startedAt, agent);
}
