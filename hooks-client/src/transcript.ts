// Pure reading of Claude Code transcript JSONL: the last assistant text (Stop fallback) and whole-session replay.
import { sha256Hex } from './util/ids';
import type { EventKind } from './spool/spool';

interface Block {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
}

interface Line {
  type?: string;
  uuid?: string;
  sessionId?: string;
  cwd?: string;
  timestamp?: string;
  promptId?: string;
  isMeta?: boolean;
  isSidechain?: boolean;
  toolUseResult?: unknown;
  message?: { role?: string; content?: string | Block[] };
}

/** Stable event id from natural keys, so the same fact sent twice (live and imported) is stored once. */
export function naturalEventId(sessionId: string, kind: EventKind, key: string): string {
  return `ev_${sha256Hex(`${sessionId}\u0000${kind}\u0000${key}`).slice(0, 32)}`;
}

function parseLine(text: string): Line | null {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' ? (v as Line) : null;
  } catch {
    return null;
  }
}

const roleOf = (l: Line) => (l.type === 'user' || l.type === 'assistant' ? l.type : l.message?.role);

function textOf(content: string | Block[] | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

/** The last assistant message with text, scanning back past tool-only turns. */
export function lastAssistantText(jsonl: string): string {
  const lines = jsonl.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim() ? parseLine(lines[i]!) : null;
    if (l && roleOf(l) === 'assistant') {
      const t = textOf(l.message?.content).trim();
      if (t) return t;
    }
  }
  return '';
}

export interface ImportedEvent {
  kind: EventKind;
  sessionId: string;
  cwd: string;
  occurredAt: string;
  eventId: string;
  fields: Record<string, unknown>;
}

/** A whole transcript as the events its hooks would have sent: prompts, tool calls, turn summaries, end. */
export function transcriptEvents(jsonl: string, fallbackSession: string): ImportedEvent[] {
  const out: ImportedEvent[] = [];
  const pendingTools = new Map<string, { name: string; input: unknown }>();
  let session = fallbackSession;
  let cwd = '';
  let lastTime = new Date(0).toISOString();
  let lastAssistant: { text: string; at: string; uuid: string } | null = null;
  const flushSummary = () => {
    if (lastAssistant) {
      out.push({
        kind: 'summarize',
        sessionId: session,
        cwd,
        occurredAt: lastAssistant.at,
        eventId: naturalEventId(session, 'summarize', lastAssistant.text),
        fields: { last_assistant_message: lastAssistant.text },
      });
      lastAssistant = null;
    }
  };
  let n = 0;
  for (const raw of jsonl.split('\n')) {
    n++;
    const l = raw.trim() ? parseLine(raw) : null;
    if (!l || l.isSidechain) continue;
    session = l.sessionId ?? session;
    cwd = l.cwd ?? cwd;
    const at = l.timestamp ?? lastTime;
    lastTime = at;
    const role = roleOf(l);
    const content = l.message?.content;
    if (role === 'assistant') {
      const text = textOf(content).trim();
      if (text) lastAssistant = { text, at, uuid: l.uuid ?? String(n) };
      if (Array.isArray(content))
        for (const b of content)
          if (b?.type === 'tool_use' && b.id && b.name) pendingTools.set(b.id, { name: b.name, input: b.input ?? {} });
      continue;
    }
    if (role !== 'user' || l.isMeta) continue;
    const results = Array.isArray(content) ? content.filter((b) => b?.type === 'tool_result' && b.tool_use_id) : [];
    for (const r of results) {
      const call = pendingTools.get(r.tool_use_id!);
      if (!call) continue;
      pendingTools.delete(r.tool_use_id!);
      const response = results.length === 1 && l.toolUseResult !== undefined ? l.toolUseResult : r.content;
      out.push({
        kind: 'observation',
        sessionId: session,
        cwd,
        occurredAt: at,
        eventId: naturalEventId(session, 'observation', r.tool_use_id!),
        fields: {
          tool_name: call.name,
          tool_input: call.input,
          tool_response: response ?? '',
          tool_use_id: r.tool_use_id,
        },
      });
    }
    const prompt = textOf(content).trim();
    if (!results.length && prompt) {
      flushSummary();
      const key = l.promptId ?? `uuid:${l.uuid ?? n}`;
      out.push({
        kind: 'init',
        sessionId: session,
        cwd,
        occurredAt: at,
        eventId: naturalEventId(session, 'init', key),
        fields: { prompt },
      });
    }
  }
  flushSummary();
  if (out.length)
    out.push({
      kind: 'end',
      sessionId: session,
      cwd,
      occurredAt: lastTime,
      eventId: naturalEventId(session, 'end', 'import'),
      fields: { reason: 'other' },
    });
  return out;
}

/**
 * The tool calls of the transcript's last prompt, as PostToolUse would have sent them (same event ids).
 * Empty when the text holds no prompt (a tail that starts mid-prompt cannot say which calls are the last
 * prompt's). Linear in the text.
 */
export function lastPromptToolCalls(jsonl: string, sessionId: string): ImportedEvent[] {
  const events = transcriptEvents(jsonl, sessionId);
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.kind === 'init') {
      start = i;
      break;
    }
  }
  return start < 0 ? [] : events.slice(start + 1).filter((e) => e.kind === 'observation');
}

/** An unfinished todo of the agent's own list, as the summarize event carries it (`todos`). */
export interface TranscriptTodo {
  text: string;
  status: 'pending' | 'in_progress';
}

const TODO_STATUSES = new Set(['pending', 'in_progress', 'completed']);
const MAX_TODOS = 30;
const MAX_TODO_TEXT = 300;

/**
 * The agent's unfinished todos as the transcript leaves them (Claude Code 2.1.332: the latest TodoWrite list, or the
 * tasks its TaskCreate/TaskUpdate calls made and changed; sdk-tools.d.ts of the pinned CLI). Null when the transcript
 * holds no todo tool call at all (nothing to say), [] when every todo is done. Subagents' lines are not the session's
 * list. Linear in the text.
 */
export function openTodos(jsonl: string): TranscriptTodo[] | null {
  let list: { text: string; status: string }[] | null = null;
  const tasks = new Map<string, { text: string; status: string }>();
  const creates = new Map<string, string>();
  let seen = false;
  for (const raw of jsonl.split('\n')) {
    const l = raw.trim() ? parseLine(raw) : null;
    if (!l || l.isSidechain) continue;
    const content = l.message?.content;
    if (!Array.isArray(content)) continue;
    if (roleOf(l) === 'assistant') {
      for (const b of content) {
        if (b?.type !== 'tool_use' || typeof b.name !== 'string') continue;
        const input = (b.input ?? {}) as Record<string, unknown>;
        if (b.name === 'TodoWrite' && Array.isArray(input.todos)) {
          seen = true;
          list = input.todos.flatMap((t) => {
            const o = (t ?? {}) as Record<string, unknown>;
            return typeof o.content === 'string' && typeof o.status === 'string'
              ? [{ text: o.content, status: o.status }]
              : [];
          });
        } else if (b.name === 'TaskCreate' && typeof input.subject === 'string' && b.id) {
          seen = true;
          creates.set(b.id, input.subject);
        } else if (b.name === 'TaskUpdate' && typeof input.taskId === 'string') {
          seen = true;
          const task = tasks.get(input.taskId);
          if (!task) continue;
          if (input.status === 'deleted') tasks.delete(input.taskId);
          else if (typeof input.status === 'string') task.status = input.status;
          if (typeof input.subject === 'string') task.text = input.subject;
        }
      }
      continue;
    }
    // A TaskCreate's id is in its result (toolUseResult.task.id).
    for (const b of content) {
      if (b?.type !== 'tool_result' || !b.tool_use_id || !creates.has(b.tool_use_id)) continue;
      const subject = creates.get(b.tool_use_id)!;
      creates.delete(b.tool_use_id);
      const task = (l.toolUseResult as { task?: { id?: unknown } } | undefined)?.task;
      if (typeof task?.id === 'string') tasks.set(task.id, { text: subject, status: 'pending' });
    }
  }
  if (!seen) return null;
  const all = [...(list ?? []), ...tasks.values()];
  return all
    .filter((t) => TODO_STATUSES.has(t.status) && t.status !== 'completed' && t.text.trim())
    .slice(0, MAX_TODOS)
    .map((t) => ({ text: t.text.trim().slice(0, MAX_TODO_TEXT), status: t.status as TranscriptTodo['status'] }));
}
