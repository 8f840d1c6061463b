// Which prompts of a session were wholly <private>, remembered on this machine so that the events of such a
// prompt are dropped here and never sent: the tool calls of a private prompt are drained from the inbox later
// (by the background sender), and by then only this file says which prompt they belonged to.
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../util/ids';

export interface PromptRecord {
  /** ms epoch of the UserPromptSubmit hook. */
  at: number;
  /** Claude Code's prompt_id, when the payload had one. */
  id: string | null;
  private: boolean;
}

const DIR = 'prompts';
/** Newest prompts kept per session: the events still on their way belong to the last few. */
const KEEP = 50;
const MAX_AGE_MS = 7 * 86_400_000;

const fileOf = (stateDir: string, sessionId: string) =>
  join(stateDir, DIR, `${sha256Hex(sessionId).slice(0, 32)}.json`);

function read(stateDir: string, sessionId: string): PromptRecord[] {
  try {
    const v: unknown = JSON.parse(readFileSync(fileOf(stateDir, sessionId), 'utf8'));
    return Array.isArray(v) ? (v as PromptRecord[]).filter((r) => r && typeof r.at === 'number') : [];
  } catch {
    return [];
  }
}

/** Called by UserPromptSubmit before anything else of the prompt can happen. */
export function notePrompt(stateDir: string, sessionId: string | null, record: PromptRecord): void {
  if (!sessionId) return;
  try {
    const dir = join(stateDir, DIR);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const next = [...read(stateDir, sessionId).filter((r) => !(record.id && r.id === record.id)), record]
      .sort((a, b) => a.at - b.at)
      .slice(-KEEP);
    const file = fileOf(stateDir, sessionId);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(next), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // without the note the server still drops the prompt's events (it files them under the private prompt)
  }
}

/**
 * Whether an event happened during a wholly private prompt: the prompt its prompt_id names when that prompt is
 * known here, else the latest prompt at or before the event's time (the server's own filing rule).
 */
export function duringPrivatePrompt(
  stateDir: string,
  sessionId: string | null,
  promptId: string | null,
  at: number,
): boolean {
  if (!sessionId) return false;
  const records = read(stateDir, sessionId);
  if (!records.length) return false;
  const named = promptId ? records.find((r) => r.id === promptId) : undefined;
  if (named) return named.private;
  let current: PromptRecord | undefined;
  for (const r of records) if (r.at <= at) current = r;
  return current?.private ?? false;
}

/** Forgets sessions not touched for a week (run by the sender when it starts). */
export function prunePromptLogs(stateDir: string, now: number): void {
  const dir = join(stateDir, DIR);
  try {
    for (const name of readdirSync(dir)) {
      const f = join(dir, name);
      try {
        if (now - statSync(f).mtimeMs > MAX_AGE_MS) unlinkSync(f);
      } catch {
        // gone already
      }
    }
  } catch {
    // no prompts yet
  }
}
