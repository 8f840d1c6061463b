// Hooks that record work: the prompt, each tool call, the turn's last message, the end of the session.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { call } from '../net/http';
import { scrubPayload, scrubText } from '../privacy/scrub';
import { metadataOnly } from '../privacy/sensitive-files';
import { stripMemoryTags } from '#shared/tags';
import { deliver } from '../spool/deliver';
import { lastAssistantText } from '../transcript';
import { inject, makeEvent, type HookContext, type HookOutput } from './context';
import { localTimeZone } from './recall';

const MIN_PROMPT_FOR_RECALL = 20;

export async function userPromptSubmit(ctx: HookContext): Promise<HookOutput | null> {
  const raw = ctx.input.prompt ?? '';
  const stripped = stripMemoryTags(raw);
  // Wholly private: the server is told the turn exists (numbering) but gets no text, and drops its work.
  const isPrivate = raw.trim() !== '' && stripped === '';
  const prompt = isPrivate ? '' : scrubText(stripped || '[media prompt]');
  const event = makeEvent(ctx, 'init', { prompt, private: isPrivate }, ctx.input.promptId);
  const wantsRecall = ctx.config.promptContext && !isPrivate && stripped.length >= MIN_PROMPT_FOR_RECALL;
  const [, recall] = await Promise.all([deliver(ctx.delivery, event, ctx.deadline), wantsRecall ? promptRecall(ctx, prompt) : Promise.resolve('')]);
  return inject('UserPromptSubmit', recall);
}

async function promptRecall(ctx: HookContext, prompt: string): Promise<string> {
  const { url, token, device } = ctx.delivery;
  if (!url || !token) return '';
  const q = new URLSearchParams({ project: ctx.project, q: prompt.slice(0, 500), tz: localTimeZone() });
  try {
    const r = await call(url, `/api/context/prompt?${q.toString()}`, { token, device, timeoutMs: ctx.deadline - ctx.io.now(), maxBytes: 100_000 });
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

async function recordToolCall(ctx: HookContext, response: unknown): Promise<null> {
  const { input } = ctx;
  if (!input.toolName) return null;
  const sensitive = metadataOnly(input.toolName, input.toolInput, response);
  const fields: Record<string, unknown> = {
    tool_name: input.toolName,
    tool_input: scrubPayload(sensitive ? sensitive.input : input.toolInput ?? {}),
    tool_response: scrubPayload(sensitive ? sensitive.response : response),
  };
  if (input.toolUseId) fields.tool_use_id = input.toolUseId;
  if (input.agentId) fields.agent_id = input.agentId;
  if (input.agentType) fields.agent_type = input.agentType;
  await deliver(ctx.delivery, makeEvent(ctx, 'observation', fields, input.toolUseId), ctx.deadline);
  return null;
}

export async function stop(ctx: HookContext): Promise<null> {
  const { input } = ctx;
  // A stop hook that is already continuing the turn, or a subagent's stop: not the end of the user's turn.
  if (input.stopHookActive || input.agentId) return null;
  const raw = input.lastAssistantMessage ?? (input.transcriptPath ? lastAssistantText(readTail(input.transcriptPath, 2_000_000)) : '');
  const message = scrubText(raw);
  if (!message) return null;
  await deliver(ctx.delivery, makeEvent(ctx, 'summarize', { last_assistant_message: message }, message), ctx.deadline);
  return null;
}

export async function sessionEnd(ctx: HookContext): Promise<null> {
  await deliver(ctx.delivery, makeEvent(ctx, 'end', { reason: ctx.input.reason ?? 'other' }), ctx.deadline);
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
