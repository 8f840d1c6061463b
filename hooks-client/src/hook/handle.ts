// One hook event, start to end: read stdin, pass gate 0, run the handler within its budget, print only what to
// inject. Run by `cairn hook` (hook/run-hook.ts) and, for events drained from the inbox, by hook/drain.ts.
import { adapterFor, AGENTS } from '../agents/adapters';
import { agentUnderCursor } from '../agents/cursor';
import { loadConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { projectFor } from '../project/project-key';
import { Spool } from '../spool/spool';
import { updateState } from '../state';
import { pausedAt, readPauses } from '../status/local';
import { postToolUse, postToolUseFailure, sessionEnd, stop, userPromptSubmit } from './capture';
import type { HookEvent, HookOutput } from '../hook-events';
import { BUDGET_MS, type HookContext } from './context';
import { askOnce, askReason, checkoutMode, isCaptureCommand, readCapture } from '../status/capture';
import { gate0 } from './gate';
import { parseHookInput } from './input';
import { preCompact, preToolUse, sessionStart } from './recall';

export const HOOK_EVENTS: readonly HookEvent[] = [
  'session-start',
  'user-prompt-submit',
  'pre-tool-use',
  'post-tool-use',
  'post-tool-use-failure',
  'stop',
  'pre-compact',
  'session-end',
];

const HANDLERS: Record<HookEvent, (ctx: HookContext) => Promise<HookOutput | null>> = {
  'session-start': sessionStart,
  'pre-tool-use': preToolUse,
  'user-prompt-submit': userPromptSubmit,
  'post-tool-use': postToolUse,
  'post-tool-use-failure': postToolUseFailure,
  stop,
  'pre-compact': preCompact,
  'session-end': sessionEnd,
};

/** Events that record work (a pause stops them); recall (session-start, pre-tool-use) and session-end go on. */
const RECORDING: ReadonlySet<HookEvent> = new Set([
  'user-prompt-submit',
  'post-tool-use',
  'post-tool-use-failure',
  'stop',
]);

export interface HandleOptions {
  /** Drained from the inbox: spool the event and leave sending to the caller (no network in the handler). */
  spoolOnly?: boolean;
  /** The inbox entry's name: the event's natural key when the payload has none, so a re-drain repeats its id. */
  entryKey?: string;
}

/** Always resolves to exit code 0: a memory system must never stop the agent. */
export async function handleHook(
  event: string,
  io: Io,
  startedAt = io.now(),
  agent = 'claude-code',
  opts: HandleOptions = {},
): Promise<number> {
  if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
    io.err(`cairn: unknown hook event "${event}" (expected one of ${HOOK_EVENTS.join(', ')})\n`);
    return 0;
  }
  if (!adapterFor(agent)) {
    io.err(`cairn: unknown agent "${agent}" (expected one of ${AGENTS.join(', ')})\n`);
    return 0;
  }
  const paths = pathsFor(io.env);
  try {
    const stdin = await io.readStdin();
    const actual = agentUnderCursor(agent, stdin, paths.home);
    if (actual === null) return 0;
    // Another agent's payload is read into Claude Code's shape, and the answer written back in the agent's.
    const adapter = adapterFor(actual)!;
    const adapted = adapter.input(event as HookEvent, stdin);
    const hookEvent = adapted.event;
    const input = parseHookInput(adapted.stdin, io.cwd);
    const config = loadConfig(io.env, paths);
    const { key: project, root: projectRoot } = projectFor(input.cwd, paths.stateDir, io.now());
    const verdict = gate0({
      event: hookEvent,
      cwd: input.cwd,
      project,
      toolName: input.toolName,
      prompt: input.prompt,
      internal: io.env.CAIRN_INTERNAL === '1',
      excludeProjects: config.excludeProjects,
      skipTools: config.skipTools,
      home: paths.home,
    });
    if (verdict.skip) return 0;
    // Paused from inside the agent (/cairn:pause, `cairn pause`): nothing of the session or folder is
    // recorded while it lasts (judged at the event's own time: drained entries carry when their hook ran).
    if (RECORDING.has(hookEvent) && pausedAt(readPauses(paths.stateDir), input.sessionId, input.cwd, io.now()))
      return 0;
    // The capture policy (issue 38): the admins' mode for this checkout as its last session start heard it, with the
    // person's own answer. `off`, or `ask` not yet answered: nothing of the session is sent (the end neither: it
    // would make a session row); the first prompt of an unanswered session is blocked to ask.
    if (RECORDING.has(hookEvent) || hookEvent === 'session-end') {
      const mode = checkoutMode(readCapture(paths.stateDir), projectRoot);
      if (mode !== 'on') {
        const ask =
          mode === 'ask' &&
          hookEvent === 'user-prompt-submit' &&
          !opts.spoolOnly &&
          adapter.platform === 'claude-code' &&
          !isCaptureCommand(input.prompt) &&
          askOnce(paths.stateDir, input.sessionId, io.now());
        if (ask) io.out(`${JSON.stringify(blockToAsk(projectRoot))}\n`);
        return 0;
      }
    }
    const ctx: HookContext = {
      event: hookEvent,
      io,
      input,
      config,
      paths,
      project,
      projectRoot,
      platform: adapter.platform,
      delivery: {
        url: config.url,
        token: config.token,
        device: config.device,
        stateDir: paths.stateDir,
        now: io.now,
        spool: new Spool(paths.stateDir, { maxEvents: config.spoolMaxEvents, maxBytes: config.spoolMaxBytes }),
      },
      deadline: startedAt + BUDGET_MS[hookEvent],
      spoolOnly: opts.spoolOnly ?? false,
      entryKey: opts.entryKey ?? null,
    };
    const output = await HANDLERS[hookEvent](ctx);
    const printed = output ? adapter.output(output) : null;
    if (printed) io.out(`${JSON.stringify(printed)}\n`);
  } catch (e) {
    // Bugs are recorded for `cairn status` and stderr (Claude Code's debug log), never surfaced as a failure.
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    updateState(paths.stateDir, { lastError: { at: io.now(), message: `hook ${event} failed: ${message}` } });
    io.err(`cairn: hook ${event} failed: ${message}\n`);
  }
  return 0;
}

/** Claude Code's block decision for UserPromptSubmit: the prompt is not run, the reason is shown to the user. */
export const blockToAsk = (root: string) => ({ decision: 'block' as const, reason: askReason(root) });
