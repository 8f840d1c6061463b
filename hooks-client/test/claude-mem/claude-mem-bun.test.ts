// `cairn import --claude-mem` on Node < 22.5 finds Bun where claude-mem's own installer puts it when it is not
// on PATH: $BUN_INSTALL/bin, then ~/.bun/bin (claude-mem 13.25.3's npx-cli resolver looks there in that order).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { claudeMemTools } from '../../../scripts/tools.mjs';
import { bunCandidates, readClaudeMem } from '../../src/claude-mem/read';
import { tempDir } from '../support';

// claude-mem and bun are not devDependencies: scripts/tools.mjs installs them (pinned) into .tools/claude-mem.
const TOOLS = claudeMemTools() as { claudeMem: string; bun: string };
const BUN = TOOLS.bun;
const STORE = join(TOOLS.claudeMem, 'plugin', 'sqlite', 'SessionStore.js');
/** No bun on this PATH: only the system folders, none of which holds one here (checked below). */
const BARE_PATH = '/usr/bin:/bin';
const hasNodeSqlite = Boolean(
  (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:sqlite'),
);

let db = '';
beforeAll(() => {
  db = join(tempDir('claude-mem-bun-'), 'claude-mem.db');
  const made = spawnSync(
    BUN,
    [fileURLToPath(new URL('../fixtures/claude-mem-history.cjs', import.meta.url)), STORE, db],
    { encoding: 'utf8', env: { PATH: process.env.PATH } },
  );
  if (made.status !== 0) throw new Error(`claude-mem fixture failed: ${made.stderr}`);
}, 60_000);

/** A home folder with Bun installed where the official installer puts it (`<dir>/bin/bun`), by a link to the pinned binary. */
function installBun(dir: string): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  symlinkSync(BUN, join(dir, 'bin', 'bun'));
  return join(dir, 'bin', 'bun');
}

describe('finding Bun for cairn import --claude-mem', () => {
  it('looks where claude-mem looks, in its order, after PATH', () => {
    expect(bunCandidates({ BUN_INSTALL: '/opt/bun', HOME: '/home/ana' }, 'linux')).toEqual([
      'bun',
      '/opt/bun/bin/bun',
      '/home/ana/.bun/bin/bun',
      '/usr/local/bin/bun',
      '/opt/homebrew/bin/bun',
      '/home/linuxbrew/.linuxbrew/bin/bun',
      '/usr/bin/bun',
      '/snap/bin/bun',
    ]);
    expect(
      bunCandidates(
        { USERPROFILE: 'C:/Users/ana', LOCALAPPDATA: 'C:/Users/ana/AppData/Local' },
        'win32',
        'C:/Users/ana',
      ),
    ).toEqual([
      'bun',
      'C:/Users/ana/.bun/bin/bun.exe',
      'C:/Users/ana/AppData/Local/bun/bun.exe',
      'C:/Users/ana/AppData/Local/bun/bin/bun.exe',
    ]);
    expect(bunCandidates({ CAIRN_BUN: '/x/bun', HOME: '/home/ana' }, 'linux')).toEqual(['/x/bun']);
  });

  it('reads the database through ~/.bun/bin/bun when bun is not on PATH', () => {
    const home = tempDir('bun-home-');
    installBun(join(home, '.bun'));
    expect(bunCandidates({ PATH: BARE_PATH, HOME: home }).filter((c) => c.startsWith('/') && existsSync(c))).toEqual([
      join(home, '.bun', 'bin', 'bun'),
    ]);
    const rows = readClaudeMem(db, { PATH: BARE_PATH, HOME: home });
    expect([rows.sessions.length, rows.prompts.length, rows.observations.length, rows.summaries.length]).toEqual([
      3, 3, 5, 2,
    ]);
  });

  it('reads it through $BUN_INSTALL/bin/bun, ahead of ~/.bun', () => {
    const home = tempDir('bun-home-');
    const custom = installBun(join(tempDir('bun-install-'), 'bun'));
    const rows = readClaudeMem(db, { PATH: BARE_PATH, HOME: home, BUN_INSTALL: join(custom, '..', '..') });
    expect(rows.observations.length).toBe(5);
  });

  it.skipIf(hasNodeSqlite)('says where it looked when there is no Bun anywhere', () => {
    const home = tempDir('bun-home-');
    expect(() => readClaudeMem(db, { PATH: BARE_PATH, HOME: home })).toThrow(
      /no bun was found on PATH, in \$BUN_INSTALL\/bin or ~\/\.bun\/bin \(set CAIRN_BUN to its path\)/,
    );
  });
});
