// `cairn import --claude-mem [path] [--map NAME=KEY]…`: moves a claude-mem history in. Reads its SQLite file
// read-only, turns the rows into cairn's NDJSON import records and sends them through POST /api/admin/import,
// which matches rows it already holds, so running it twice adds nothing.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { convert } from '../claude-mem/convert';
import { readClaudeMem, ReadError } from '../claude-mem/read';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { authHeaders, ndjsonParts, sendParts } from './transfer';

const USAGE =
  'usage: cairn import --claude-mem [path] [--map NAME=KEY]… [--dry-run]   (default path ~/.claude-mem/claude-mem.db)\n';

/** `--map a=github.com/me/a` pairs; null names the first malformed one. */
export function parseMaps(values: string[]): { map: Map<string, string>; bad: string | null } {
  const map = new Map<string, string>();
  for (const v of values) {
    const at = v.lastIndexOf('=');
    const name = v.slice(0, at).trim();
    const key = v.slice(at + 1).trim();
    if (at <= 0 || !name || !key) return { map, bad: v };
    map.set(name, key);
  }
  return { map, bad: null };
}

async function whoAmI(config: { url: string; token: string; device: string | null }): Promise<string> {
  const res = await fetch(new URL('/api/viewer/me', `${config.url}/`), {
    headers: authHeaders(config),
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status !== 200) throw new Error(`the server did not say who this token belongs to (HTTP ${res.status})`);
  const { handle } = (await res.json()) as { handle?: unknown };
  if (typeof handle !== 'string' || !handle) throw new Error('the server did not say who this token belongs to');
  return handle;
}

export async function importClaudeMem(args: string[], io: Io): Promise<number> {
  // `--claude-mem` takes an optional path: as a flag it may be followed by a positional or nothing.
  const rest = args
    .map((a) => (a.startsWith('--claude-mem=') ? a.slice('--claude-mem='.length) : a))
    .filter((a) => a !== '--claude-mem');
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { map: { type: 'string', multiple: true }, 'dry-run': { type: 'boolean' } },
    });
  } catch (e) {
    io.err(`cairn: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const { map, bad } = parseMaps(values.map ?? []);
  if (bad !== null || positionals.length > 1) {
    io.err(`${bad !== null ? `cairn: --map wants NAME=KEY, got "${bad}"\n` : ''}${USAGE}`);
    return 2;
  }
  const path = positionals[0] ?? join(io.env.HOME || homedir(), '.claude-mem', 'claude-mem.db');
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  let rows;
  try {
    rows = readClaudeMem(path, io.env);
  } catch (e) {
    if (!(e instanceof ReadError)) throw e;
    io.err(`cairn: ${e.message}\n`);
    return 1;
  }
  const handle = await whoAmI(config);
  const { records, projects, unmapped, counts } = convert(rows, map, handle);
  io.err(
    `cairn: ${path}: ${counts.sessions} sessions, ${counts.prompts} prompts, ${counts.observations} observations, ${counts.summaries} summaries` +
      `${counts.skipped ? ` (${counts.skipped} rows without a session left out)` : ''}\n`,
  );
  for (const [name, key] of projects)
    io.err(`  ${name} → ${key}${unmapped.includes(name) ? ' (private to you)' : ''}\n`);
  let added: Record<string, number> | null = {};
  if (!values['dry-run']) {
    added = await sendParts(ndjsonParts(records.map((r) => JSON.stringify(r)).join('\n')), config, io);
    if (!added) return 1;
  }
  if (unmapped.length) {
    io.err(
      `cairn: ${unmapped.length} claude-mem project name(s) had no --map and went to your private local/NAME projects: ${unmapped.join(', ')}.\n` +
        `  To put one in a team project instead, map it before its first import: --map ${unmapped[0]}=<project key> (repeatable).\n` +
        '  Sessions already imported stay in the project they went to; forget that project first to re-import them elsewhere.\n',
    );
  }
  const summary = Object.entries(added)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  io.out(
    values['dry-run']
      ? `cairn: dry run, nothing sent (${records.length} records)\n`
      : `cairn: imported ${records.length} records from claude-mem: new ${summary || 'nothing'} (rows already there were left alone)\n`,
  );
  return 0;
}
