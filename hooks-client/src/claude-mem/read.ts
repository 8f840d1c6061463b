// Reads a claude-mem database read-only: through node:sqlite when this Node has it (≥ 22.5), else through
// Bun's bun:sqlite (claude-mem runs on Bun, so its users have it). Never writes to the file.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type Row = Record<string, unknown>;

export interface ClaudeMemRows {
  sessions: Row[];
  observations: Row[];
  summaries: Row[];
  prompts: Row[];
}

/** Table → rows name; ordered by id so a re-run sends records in the same order. */
const TABLES: Array<[keyof ClaudeMemRows, string]> = [
  ['sessions', 'sdk_sessions'],
  ['prompts', 'user_prompts'],
  ['observations', 'observations'],
  ['summaries', 'session_summaries'],
];

export class ReadError extends Error {}

interface SqliteModule {
  DatabaseSync: new (
    path: string,
    options: { readOnly: boolean },
  ) => {
    prepare(sql: string): { all(): Row[] };
    close(): void;
  };
}

function viaNodeSqlite(path: string): ClaudeMemRows | null {
  // getBuiltinModule answers undefined (not a throw) for a module this Node does not have.
  const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const sqlite = getBuiltin?.('node:sqlite') as SqliteModule | undefined;
  if (!sqlite?.DatabaseSync) return null;
  const db = new sqlite.DatabaseSync(path, { readOnly: true });
  try {
    const out: ClaudeMemRows = { sessions: [], observations: [], summaries: [], prompts: [] };
    for (const [key, table] of TABLES) out[key] = db.prepare(`SELECT * FROM ${table} ORDER BY id`).all();
    return out;
  } finally {
    db.close();
  }
}

// Prints one `{"t":key,"r":row}` line a row; the path comes in argv, never inside the script text. One line:
// the client bundle is checked for module syntax at line starts, and this text is for Bun, not for it.
const BUN_SCRIPT =
  'import{Database}from"bun:sqlite";const db=new Database(process.argv[process.argv.length-1],{readonly:true});const out=[];' +
  `for(const[k,t]of ${JSON.stringify(TABLES)})for(const r of db.query("SELECT * FROM "+t+" ORDER BY id").all())out.push(JSON.stringify({t:k,r}));` +
  'db.close();process.stdout.write(out.join("\\n")+"\\n");';

/**
 * Where Bun may be, in the order tried: `CAIRN_BUN` alone when set; else `bun` on PATH, then where claude-mem's
 * own installer looks when it is not on PATH (its npx-cli Bun resolver, claude-mem 13.25.3): `$BUN_INSTALL/bin`,
 * `~/.bun/bin` (the official installer's default, which adds it to PATH only in shells that read its profile
 * line), `%LOCALAPPDATA%\\bun` on Windows, then the package managers' folders.
 */
export function bunCandidates(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
  home = homedir(),
): string[] {
  if (env.CAIRN_BUN) return [env.CAIRN_BUN];
  const exe = platform === 'win32' ? 'bun.exe' : 'bun';
  const homes = [env.HOME || home, platform === 'win32' ? env.USERPROFILE : undefined].filter((h): h is string =>
    Boolean(h),
  );
  const local =
    platform === 'win32' && env.LOCALAPPDATA
      ? [join(env.LOCALAPPDATA, 'bun', exe), join(env.LOCALAPPDATA, 'bun', 'bin', exe)]
      : [];
  const system =
    platform === 'win32'
      ? []
      : [
          '/usr/local/bin/bun',
          '/opt/homebrew/bin/bun',
          '/home/linuxbrew/.linuxbrew/bin/bun',
          '/usr/bin/bun',
          '/snap/bin/bun',
        ];
  return [
    ...new Set([
      'bun',
      ...(env.BUN_INSTALL ? [join(env.BUN_INSTALL, 'bin', exe)] : []),
      ...homes.map((h) => join(h, '.bun', 'bin', exe)),
      ...local,
      ...system,
    ]),
  ];
}

/** Reads through the first Bun found (see bunCandidates); null when there is none. */
function viaAnyBun(path: string, env: Record<string, string | undefined>): ClaudeMemRows | null {
  for (const bun of bunCandidates(env)) {
    // A bare name is looked up on PATH by the spawn itself; a path is tried only when the file is there.
    if (bun.includes('/') || bun.includes('\\')) {
      if (!existsSync(bun)) continue;
    }
    const rows = viaBun(path, bun, env);
    if (rows) return rows;
  }
  return null;
}

function viaBun(path: string, bun: string, env: Record<string, string | undefined>): ClaudeMemRows | null {
  // child_process is loaded here, on use, as in `cairn install`: no hook pays for it.
  const r = process.getBuiltinModule('node:child_process').spawnSync(bun, ['-e', BUN_SCRIPT, path], {
    env,
    encoding: 'utf8',
    maxBuffer: 2 ** 31 - 1,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  if (r.error || r.status !== 0)
    throw new ReadError(
      `bun could not read ${path}: ${(r.error?.message ?? r.stderr.trim().split('\n').pop()) || `exit ${r.status}`}`,
    );
  const out: ClaudeMemRows = { sessions: [], observations: [], summaries: [], prompts: [] };
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const { t, r: row } = JSON.parse(line) as { t: keyof ClaudeMemRows; r: Row };
    out[t].push(row);
  }
  return out;
}

/** All rows of the four tables, or a ReadError whose message is one line a person can act on. */
export function readClaudeMem(path: string, env: Record<string, string | undefined>): ClaudeMemRows {
  if (!existsSync(path))
    throw new ReadError(`no claude-mem database at ${path} (pass its path: cairn import --claude-mem <file>)`);
  try {
    const rows = viaNodeSqlite(path) ?? viaAnyBun(path, env);
    if (rows) return rows;
  } catch (e) {
    if (e instanceof ReadError) throw e;
    throw new ReadError(`cannot read ${path} as a claude-mem database: ${(e as Error).message}`);
  }
  throw new ReadError(
    `reading a claude-mem database needs Node ≥ 22.5 (node:sqlite) or Bun; this is Node ${process.versions.node} and no bun was found on PATH, in $BUN_INSTALL/bin or ~/.bun/bin (set CAIRN_BUN to its path)`,
  );
}
