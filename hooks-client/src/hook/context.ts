// What every hook handler gets: parsed input, config, project key, spool, and its deadline.
import { guardFrame } from '#shared/fence';
import type { Config, Paths } from '../config';
import type { Io } from '../io';
import type { DeliveryContext } from '../spool/deliver';
import type { EventKind, SpooledEvent } from '../spool/spool';
import { readGitHead, type GitHead } from '../project/git-head';
import { naturalEventId } from '../transcript';
import { randomId } from '../util/ids';
import type { HookEvent, HookOutput } from '../hook-events';
import type { HookInput } from './input';

export interface HookContext {
  event: HookEvent;
  io: Io;
  input: HookInput;
  config: Config;
  paths: Paths;
  project: string;
  /** The git top level (or cwd): sent with every event so the server can store paths that hold on any machine. */
  projectRoot: string;
  delivery: DeliveryContext;
  /** The agent the payload came from, stored as the session's platform (claude-code, codex, gemini, cursor, opencode). */
  platform: string;
  /** ms epoch by which the hook must be done talking to the network. */
  deadline: number;
  /** Drained from the inbox: events go to the spool only; the sender (or the draining hook) sends them. */
  spoolOnly: boolean;
  /** Natural key of last resort (the inbox entry's name), so that draining an entry twice repeats its event_id. */
  entryKey: string | null;
}

/**
 * Budgets per event, from process start: SessionEnd shares 1.5 s in Claude Code, node itself needs ~50 ms.
 * Stop is synchronous (Claude Code waits for it at the end of every turn), so its budget is kept short: the
 * summary is in the spool before any network work, and what a slow server does not take in time is sent by
 * SessionEnd or the next hook.
 */
export const BUDGET_MS: Record<HookEvent, number> = {
  'session-start': 3_000,
  'user-prompt-submit': 1_500,
  'pre-tool-use': 1_000,
  'post-tool-use': 1_000,
  'post-tool-use-failure': 1_000,
  stop: 1_000,
  // Claude Code waits for it, but compaction itself takes seconds: time to send what waits and ask for the block.
  'pre-compact': 4_000,
  'session-end': 900,
};

/**
 * An ingest event with the fields every route needs; a natural key makes repeats recognisable. Claude Code's
 * own `prompt_id` goes along when the payload has one (it says exactly which prompt the event belongs to);
 * `client_seq` is stamped when the event is spooled.
 */
export function makeEvent(
  ctx: HookContext,
  kind: EventKind,
  fields: Record<string, unknown>,
  naturalKey?: string | null,
): SpooledEvent {
  const sessionId = ctx.input.sessionId ?? 'unknown';
  const promptId = ctx.input.promptId ? { prompt_id: ctx.input.promptId } : {};
  const key = naturalKey || ctx.entryKey;
  const head = gitHeadOf(ctx);
  const git = {
    ...(head?.branch ? { git_branch: head.branch } : {}),
    ...(head?.commit ? { git_commit: head.commit } : {}),
  };
  return {
    kind,
    body: {
      event_id: key ? naturalEventId(sessionId, kind, key) : randomId(),
      session_id: sessionId,
      project: ctx.project,
      cwd: ctx.input.cwd,
      project_root: ctx.projectRoot,
      occurred_at: new Date(ctx.io.now()).toISOString(),
      platform: ctx.platform,
      ...promptId,
      ...git,
      ...fields,
    },
  };
}

const heads = new WeakMap<HookContext, GitHead | null>();

/**
 * The checkout's branch and commit, read once per hook from .git files (no process). A drained inbox entry is
 * read when it is drained, normally within a second of its hook, so a commit made in between is attributed to it.
 */
function gitHeadOf(ctx: HookContext): GitHead | null {
  if (!heads.has(ctx)) heads.set(ctx, safeHead(ctx.projectRoot));
  return heads.get(ctx) ?? null;
}

function safeHead(root: string): GitHead | null {
  try {
    return readGitHead(root);
  } catch {
    return null;
  }
}

/** Claude Code caps injected text at 10,000 chars (beyond that it saves to a file): stay under it. */
export const MAX_CONTEXT_CHARS = 9_500;

export function inject(name: HookOutput['hookSpecificOutput']['hookEventName'], text: string): HookOutput | null {
  // Memory is data: whatever the server sent, nothing inside its frame may close or reopen it (src/shared/fence.ts).
  const t = guardFrame(text.trim());
  if (!t) return null;
  return { hookSpecificOutput: { hookEventName: name, additionalContext: cutToFit(t, MAX_CONTEXT_CHARS) } };
}

/** `text` within `max` characters, its closing tag kept when it has to be cut ('' when nothing fits). */
export function cutToFit(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max < 200) return '';
  const closing = /<\/[a-z-]+>$/.exec(text)?.[0] ?? '';
  return `${text.slice(0, max - 80).trimEnd()}\n… (cut to fit; search memory for more)${closing ? `\n${closing}` : ''}`;
}
