// Hooks that record work: the prompt, each tool call, the turn's last message, the end of the session.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { call } from '../net/http';
import { scrubPayload, scrubText } from '../privacy/scrub';
import { metadataOnly } from '../privacy/sensitive-files';
import { stripMemoryTags } from '#shared/tags';
import { deliver } from '../spool/deliver';
import type { SpooledEvent } from '../spool/spool';
import { lastAssistantText, lastPromptToolCalls, openTodos } from '../transcript';
import { toolSkipped } from './gate';
import { inject, makeEvent, type HookContext } from './context';
import type { HookOutput } from '../hook-events';
import { duringPrivatePrompt, notePrompt } from './prompt-log';
import { localTimeZone, receiptSession } from './recall';
import { bumpSessionFact, readPauses, resumedAt } from '../status/local';
import { noteSeenCall, seenCalls } from './seen-calls';
import { eventFileIds } from './evidence';

const MIN_PROMPT_FOR_RECALL = 20;

export async function userPromptSubmit(ctx: HookContext): Promise<HookOutput | null> {
  const raw = ctx.input.prompt ?? '';
  const stripped = stripMemoryTags(raw);
  // Wholly private: the server is told the turn exists (numbering) but gets no text, and drops its work.
  const isPrivate = raw.trim() !== '' && stripped === '';
  const prompt = isPrivate ? '' : scrubText(stripped || '[media prompt]');
  // First: the prompt's tool calls are drained from the inbox later and must find out they were private.
  notePrompt(ctx.paths.stateDir, ctx.input.sessionId, { at: ctx.io.now(), id: ctx.input.promptId, private: isPrivate });
  const event = makeEvent(ctx, 'init', { prompt, private: isPrivate }, ctx.input.promptId);
  const wantsRecall = ctx.config.promptContext && !isPrivate && stripped.length >= MIN_PROMPT_FOR_RECALL;
  const [, recall] = await Promise.all([
    deliver(ctx.delivery, event, ctx.deadline),
    wantsRecall ? promptRecall(ctx, prompt) : Promise.resolve(''),
  ]);
  if (recall.trim()) bumpSessionFact(ctx.paths.stateDir, ctx.input.sessionId, 'recalled');
  return inject('UserPromptSubmit', recall);
}

async function promptRecall(ctx: HookContext, prompt: string): Promise<string> {
  const { url, token, device } = ctx.delivery;
  if (!url || !token) return '';
  const q = new URLSearchParams({ project: ctx.project, q: prompt.slice(0, 500), tz: localTimeZone() });
  const session = receiptSession(ctx.input.sessionId);
  if (session) q.set('session', session);
  try {
    const r = await call(url, `/api/context/prompt?${q.toString()}`, {
      token,
      device,
      timeoutMs: ctx.deadline - ctx.io.now(),
      maxBytes: 100_000,
    });
    return r.status === 200 ? r.text : '';
  } catch {
    return '';
  }
}

export async function postToolUse(ctx: HookContext): Promise<null> {
  return recordToolCall(ctx, ctx.input.toolResponse ?? '');
}

/** A failed tool call (a command that exited non-zero, an edit that did not apply): often the most telling event. */
export async function postToolUseFailure(ctx: HookContext): Promise<null> {
  const { input } = ctx;
  // The user pressing Esc is not something the code did.
  if (input.isInterrupt) return null;
  return recordToolCall(ctx, { is_error: true, error: input.error ?? 'the tool call failed' });
}

/** The fields of a tool event as the server gets them: sensitive files as metadata only, secrets scrubbed. */
function toolFields(toolName: string, toolInput: unknown, response: unknown): Record<string, unknown> {
  const sensitive = metadataOnly(toolName, toolInput, response);
  return {
    tool_name: toolName,
    tool_input: scrubPayload(sensitive ? sensitive.input : (toolInput ?? {})),
    tool_response: scrubPayload(sensitive ? sensitive.response : response),
  };
}

async function recordToolCall(ctx: HookContext, response: unknown): Promise<null> {
  const { input } = ctx;
  if (!input.toolName) return null;
  const fields = toolFields(input.toolName, input.toolInput, response);
  if (input.toolUseId) fields.tool_use_id = input.toolUseId;
  if (input.agentId) fields.agent_id = input.agentId;
  if (input.agentType) fields.agent_type = input.agentType;
  // The ids of the files it read or changed, as they are now (never their content): the record's evidence.
  const ids = eventFileIds(ctx, input.toolName, input.toolInput);
  if (ids) fields.file_ids = ids;
  if (await record(ctx, makeEvent(ctx, 'observation', fields, input.toolUseId)))
    noteSeenCall(ctx.paths.stateDir, input.sessionId, input.toolUseId);
  return null;
}

/** Whether the event belongs to a wholly private prompt: then it is dropped here and never leaves the machine. */
const isPrivateTurn = (ctx: HookContext, at: number) =>
  duringPrivatePrompt(ctx.paths.stateDir, ctx.input.sessionId, ctx.input.promptId, at);

/** Spool (drained from the inbox: the sender sends it) or spool and send now; never an event of a private prompt. */
async function record(ctx: HookContext, event: SpooledEvent): Promise<boolean> {
  if (isPrivateTurn(ctx, ctx.io.now())) return false;
  if (ctx.spoolOnly) ctx.delivery.spool.append(event);
  else await deliver(ctx.delivery, event, ctx.deadline);
  return true;
}

/**
 * Tool calls of one prompt Stop spools at most. Those already spooled by PostToolUse are skipped (seen-calls.ts),
 * so the bound matters only when no hook got through (the HTTP hook with no sender running): a whole prompt.
 */
const MAX_BACKFILL = 200;
const TRANSCRIPT_TAIL_BYTES = 2_000_000;

/**
 * PostToolUse is async, and `claude -p` ends async hooks when it exits: the hook of a tool call made just
 * before the end may be killed before it spooled its event, and that call would be missing from memory.
 * Stop (synchronous) therefore spools the prompt's tool calls from the transcript, under the same event ids
 * PostToolUse uses, before the summary: the server keeps whichever copy comes first and ignores the other.
 */
function spoolPromptToolCalls(ctx: HookContext, transcript: string): void {
  const sessionId = ctx.input.sessionId;
  if (!sessionId || ctx.platform !== 'claude-code' || isPrivateTurn(ctx, ctx.io.now())) return;
  // Calls made before a resume in this prompt were made while paused: never backfilled.
  const resumed = resumedAt(readPauses(ctx.paths.stateDir), sessionId, ctx.input.cwd);
  const seen = seenCalls(ctx.paths.stateDir, sessionId);
  const calls = lastPromptToolCalls(transcript, sessionId).filter(
    (e) => !(typeof e.fields.tool_use_id === 'string' && seen.has(e.fields.tool_use_id)),
  );
  for (const e of calls.slice(-MAX_BACKFILL)) {
    if (resumed && !(Date.parse(e.occurredAt) > resumed)) continue;
    const name = typeof e.fields.tool_name === 'string' ? e.fields.tool_name : '';
    const useId = typeof e.fields.tool_use_id === 'string' ? e.fields.tool_use_id : null;
    if (!name || !useId || toolSkipped(name, ctx.config.skipTools)) continue;
    const event = makeEvent(
      ctx,
      'observation',
      { ...toolFields(name, e.fields.tool_input, e.fields.tool_response), tool_use_id: useId },
      useId,
    );
    if (!Number.isNaN(Date.parse(e.occurredAt))) event.body.occurred_at = e.occurredAt;
    ctx.delivery.spool.append(event);
  }
}

export async function stop(ctx: HookContext): Promise<null> {
  const { input } = ctx;
  // A stop hook that is already continuing the turn, or a subagent's stop: not the end of the user's turn.
  if (input.stopHookActive || input.agentId) return null;
  const transcript = input.transcriptPath ? readTail(input.transcriptPath, TRANSCRIPT_TAIL_BYTES) : '';
  spoolPromptToolCalls(ctx, transcript);
  const raw = input.lastAssistantMessage ?? lastAssistantText(transcript);
  const message = scrubText(raw);
  if (!message) return null;
  // The agent's unfinished todos, so that a session continued elsewhere knows what is open (Claude Code's
  // transcript; other agents keep none cairn can read). Scrubbed like every text that leaves the machine.
  const todos = ctx.platform === 'claude-code' ? openTodos(transcript) : null;
  const open = todos?.map((t) => ({ text: scrubText(t.text), status: t.status })).filter((t) => t.text) ?? null;
  await record(
    ctx,
    makeEvent(ctx, 'summarize', { last_assistant_message: message, ...(open ? { todos: open } : {}) }, message),
  );
  return null;
}

export async function sessionEnd(ctx: HookContext): Promise<null> {
  // No text: sent even after a private prompt (the server closes the session).
  const event = makeEvent(ctx, 'end', { reason: ctx.input.reason ?? 'other' });
  if (ctx.spoolOnly) ctx.delivery.spool.append(event);
  else await deliver(ctx.delivery, event, ctx.deadline);
  return null;
}

function readTail(path: string, maxBytes: number): string {
  try {
    const size = statSync(path).size;
    const start = Math.max(0, size - maxBytes);
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      return buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}
