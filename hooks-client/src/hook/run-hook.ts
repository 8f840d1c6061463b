// `cairn hook <event>` in the full client: everything but the quick path (boot.ts answers async hooks alone).
// Every hook that sends (all but pre-tool-use) first drains the inbox into the spool, so what the quick hooks
// left goes out before, and in order with, this hook's own event, whether or not a sender is running.
import { keepPluginLogin, pathsFor } from '../config';
import { guardDoor, sessionEnded } from '../door/guard';
import type { Io } from '../io';
import { BUNDLED } from '../version';
import { BUDGET_MS } from './context';
import { drainInbox } from './drain';
import type { HookEvent, HookOutput } from '../hook-events';
import { handleHook } from './handle';

/** How long a hook waits for another process (the sender) to finish draining before going on without. */
const DRAIN_WAIT_MS = 300;

/**
 * Hooks that make sure the sender runs, holding the HTTP door, before the tool calls of the turn POST to it
 * (door/guard.ts: and that nothing else holds it).
 */
const STARTS_SENDER = new Set(['session-start', 'user-prompt-submit']);

/** Always resolves to exit code 0: a memory system must never stop the agent. */
export async function runHook(event: string, io: Io, startedAt = io.now(), agent = 'claude-code'): Promise<number> {
  let notice: string | null = null;
  if (
    agent === 'claude-code' &&
    io.env.CAIRN_INTERNAL !== '1' &&
    (STARTS_SENDER.has(event) || event === 'session-end')
  ) {
    // The session's id is in the payload: read it once here, and hand the same text to the handler.
    const stdin = await io.readStdin();
    io = withStdin(io, stdin);
    const stateDir = pathsFor(io.env).stateDir;
    try {
      if (event === 'session-end') sessionEnded(stateDir, sessionIdOf(stdin));
      else if (io.env.CAIRN_SENDER !== 'off')
        // process.argv[1] is the client only in the built file (never under tests): only it starts a sender.
        notice = await guardDoor(io, stateDir, BUNDLED && process.argv[1] ? process.argv[1] : null, sessionIdOf(stdin));
    } catch {
      // the door's bookkeeping never stops a hook
    }
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
  if (!notice) return handleHook(event, io, startedAt, agent);
  // Whatever the handler answers (or nothing: paused, excluded, failed), the notice is in the answer.
  let printed = '';
  const code = await handleHook(
    event,
    Object.assign(Object.create(io) as Io, { out: (t: string) => void (printed += t) }),
    startedAt,
    agent,
  );
  io.out(`${JSON.stringify(withNotice(printed, event, notice))}\n`);
  return code;
}

/** Claude Code's answer for SessionStart or UserPromptSubmit with `notice` first in its context and shown to the user. */
function withNotice(
  printed: string,
  event: string,
  notice: string,
): HookOutput | { decision: 'block'; reason: string } {
  let context = '';
  try {
    const out = JSON.parse(printed) as HookOutput & { decision?: unknown; reason?: unknown };
    // A prompt blocked to ask about capture (status/capture.ts) stays blocked; the notice joins its reason.
    if (out.decision === 'block' && typeof out.reason === 'string')
      return { decision: 'block', reason: `${out.reason}\n\n${notice}` };
    context = out.hookSpecificOutput.additionalContext ?? '';
  } catch {
    // nothing was printed
  }
  const hookEventName = event === 'session-start' ? 'SessionStart' : 'UserPromptSubmit';
  return {
    hookSpecificOutput: { hookEventName, additionalContext: context ? `${notice}\n\n${context}` : notice },
    systemMessage: notice,
  };
}

/** The same Io with stdin already read (a getter of the real one, isTty, stays lazy). */
function withStdin(io: Io, stdin: string): Io {
  return Object.assign(Object.create(io) as Io, { readStdin: async () => stdin });
}

function sessionIdOf(stdin: string): string | null {
  try {
    const v = (JSON.parse(stdin) as { session_id?: unknown }).session_id;
    return typeof v === 'string' && v ? v.slice(0, 200) : null;
  } catch {
    return null;
  }
}
