// What every agent adapter shares: the adapter's shape and lenient reading of an agent's hook JSON.
import type { HookEvent, HookOutput } from '../hook-events';

export interface AdaptedInput {
  /** The cairn event to run (an agent may report a failed tool call through its ordinary after-tool event). */
  event: HookEvent;
  /** Claude Code-shaped JSON text for parseHookInput. */
  stdin: string;
}

export interface Adapter {
  /** What the server stores as the session's platform. */
  platform: string;
  input(event: HookEvent, stdin: string): AdaptedInput;
  /** The JSON the agent reads on stdout, or null to print nothing. */
  output(out: HookOutput): unknown;
}

export type Raw = Record<string, unknown>;

export const isRaw = (v: unknown): v is Raw => !!v && typeof v === 'object' && !Array.isArray(v);

/** The payload as an object; anything else (not JSON, an array) reads as empty, so the hook does nothing. */
export function parseObject(stdin: string): Raw {
  try {
    const v: unknown = JSON.parse(stdin || '{}');
    return isRaw(v) ? v : {};
  } catch {
    return {};
  }
}

/** An agent's built-in tool under Claude Code's name (whose arguments the observer and file tracking read). */
export const renamedTool = (names: Record<string, string>, name: unknown): unknown =>
  typeof name === 'string' && Object.hasOwn(names, name) ? names[name] : name;

/** A JSON text parsed, or the text itself when it is not JSON (tool outputs arrive as either). */
export function jsonOrText(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/**
 * The events whose payload is only the session and one field, read alike from agents that report them as
 * `{text}` (the turn's answer) and `{reason}`: session start (always a fresh start: these agents say no more),
 * the turn's answer, the session's end, and anything else as the bare session.
 */
export function sessionEvent(event: HookEvent, base: Raw, raw: Raw): AdaptedInput {
  switch (event) {
    case 'session-start':
      return { event, stdin: JSON.stringify({ ...base, source: 'startup' }) };
    case 'stop':
      return { event, stdin: JSON.stringify({ ...base, last_assistant_message: raw.text }) };
    case 'session-end':
      return { event, stdin: JSON.stringify({ ...base, reason: raw.reason }) };
    default:
      return { event, stdin: JSON.stringify(base) };
  }
}
