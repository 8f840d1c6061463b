// `cairn pause` / `cairn resume`: stop recording one session or one folder (for N hours, or until resumed),
// from a terminal or from inside Claude Code (/cairn:pause runs this with the session id). The hooks honour it
// (hook/handle.ts) and the status line shows it. Recall goes on: the agent still gets its memory.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathsFor } from '../config';
import type { Io } from '../io';
import { clearPause, FOREVER, leftText, setPause } from '../status/local';

const OPTIONS = { session: { type: 'string' }, folder: { type: 'string' }, hours: { type: 'string' } } as const;
const MAX_HOURS = 24 * 30;

interface Target {
  scope: 'session' | 'folder';
  key: string;
  hours: number | null;
}

/**
 * Flags, or the words a slash command passes on (`/cairn:pause 2`, `/cairn:pause folder 3`): a number is hours,
 * `folder` means the current folder. Without --session the folder is meant.
 */
function target(args: string[], io: Io): Target | string {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true });
  let hours: number | null = values.hours !== undefined ? Number(values.hours) : null;
  let folderWord = false;
  for (const word of positionals.flatMap((p) => p.split(/\s+/)).filter(Boolean)) {
    if (/^folder$/i.test(word)) folderWord = true;
    else if (/^session$/i.test(word)) folderWord = false;
    else if (/^\d+(\.\d+)?h?$/i.test(word)) hours = Number(word.replace(/h$/i, ''));
    else return `"${word.slice(0, 40)}" is neither a number of hours nor "folder"`;
  }
  if (hours !== null && !(hours > 0 && hours <= MAX_HOURS)) return `hours must be more than 0 and at most ${MAX_HOURS}`;
  const session = values.session?.trim();
  if (session && !folderWord && values.folder === undefined) return { scope: 'session', key: session, hours };
  return { scope: 'folder', key: resolve(io.cwd, values.folder || '.'), hours };
}

const describe = (t: Target) => (t.scope === 'session' ? 'this session' : `the folder ${t.key}`);

export async function pause(args: string[], io: Io): Promise<number> {
  const t = target(args, io);
  if (typeof t === 'string') {
    io.err(`cairn pause: ${t}\nusage: cairn pause [--session ID | --folder PATH] [--hours N]\n`);
    return 2;
  }
  const now = io.now();
  const until = t.hours === null ? FOREVER : now + Math.round(t.hours * 3_600_000);
  setPause(pathsFor(io.env).stateDir, t.scope, t.key, now, until);
  io.out(
    `cairn: recording paused for ${describe(t)} (${leftText(until, now)}). Memory is still recalled; resume with /cairn:resume or \`cairn resume\`.\n`,
  );
  return 0;
}

export async function resume(args: string[], io: Io): Promise<number> {
  const t = target(args, io);
  if (typeof t === 'string') {
    io.err(`cairn resume: ${t}\nusage: cairn resume [--session ID | --folder PATH]\n`);
    return 2;
  }
  const had = clearPause(pathsFor(io.env).stateDir, t.scope, t.key, io.now());
  io.out(
    had ? `cairn: recording resumed for ${describe(t)}.\n` : `cairn: recording was not paused for ${describe(t)}.\n`,
  );
  return 0;
}
