// The client build: one self-contained script, and the plugin's committed copy is the build of the current sources.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PLUGIN_COPY, buildClient } from '../../build.mjs';

const file = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

describe('build', () => {
  it('writes one self-contained plain script that runs under both the .mjs and the .cjs name', async () => {
    const { code } = await buildClient({ quiet: true });
    // Plain script: no module syntax, so one text runs as cairn.mjs and as the faster-starting cairn.cjs.
    expect(code).not.toMatch(
      /^[ \t]*(?:import(?:[ \t]+[\w{*]|[ \t]*[{'"*])|export[ \t])|\bimport(?:\.meta|\s*\()|\brequire\(/m,
    );
    expect(readFileSync(file('../../dist/cairn.mjs'), 'utf8')).toBe(code);
    expect(readFileSync(file('../../dist/cairn.cjs'), 'utf8')).toBe(code);
  }, 60_000);

  it('finds the plugin copy of the client current with the sources (run `npm run build:plugin` if not)', async () => {
    // The plugin installs from git, so its copy is committed; npm test never rewrites it, so this can fail.
    const { code } = await buildClient({ quiet: true });
    expect(
      readFileSync(PLUGIN_COPY, 'utf8') === code,
      'plugin/scripts/cairn.cjs is stale: run `npm run build:plugin` and commit it',
    ).toBe(true);
  }, 60_000);

  it('loads node built-ins through process.getBuiltinModule: net for a hook, http only for the sender, child_process only to start a program', async () => {
    const { code } = await buildClient({ quiet: true });
    expect(code).toContain('process.getBuiltinModule("node:net")');
    // node:crypto only where a file's git blob id is hashed (repo/tracked.ts blobIdOf: megabytes, not a few short
    // strings), loaded at that call; never at start-up.
    const crypto = code.match(/getBuiltinModule\("node:crypto"\)(\.createHash\()?/g) ?? [];
    expect(crypto.every((m) => m.endsWith('.createHash('))).toBe(true);
    expect(crypto.length).toBeLessThanOrEqual(1);
    // node:http(s) only behind the choice of protocol for a kept-alive connection (the background sender), and
    // for the sender's HTTP hook door, loaded where it opens.
    expect(code.match(/getBuiltinModule\("node:https?"\)/g)).toHaveLength(3);
    expect(code).toContain('process.getBuiltinModule("node:http").createServer(');
    expect(code).toContain('process.getBuiltinModule("node:https") : process.getBuiltinModule("node:http")');
    // child_process only where a command runs another program (`cairn install` → claude, `import --claude-mem`
    // → bun), each loaded at that call, never at start-up; and once in the quick hook, only when it must start
    // the background sender. SessionStart runs one bounded `git rev-list` (execFile, no shell).
    // (The OpenCode plugin's `import … from "node:child_process"` is text cairn writes into a file, not a load.)
    const written = code.split('from "node:child_process"').length - 1;
    expect(written).toBe(1);
    const mentions = code.split('node:child_process').length - 1 - written;
    expect(mentions).toBeGreaterThan(0);
    // spawn twice: the quick hook (boot), and SessionStart / UserPromptSubmit starting the sender (client body).
    expect(code.match(/getBuiltinModule\(\\?"node:child_process\\?"\)\.(?:spawnSync|execFile)\(/g)).toHaveLength(
      mentions - 2,
    );
    expect(code.match(/const \{ spawn \} = process\.getBuiltinModule\(\\?"node:child_process\\?"\)/g)).toHaveLength(2);
    const plugin = JSON.parse(readFileSync(file('../../../plugin/hooks/hooks.json'), 'utf8')) as {
      hooks: Record<string, Array<{ hooks: Array<{ args: string[] }> }>>;
    };
    for (const entries of Object.values(plugin.hooks))
      expect(entries[0]!.hooks[0]!.args[0]).toBe('${CLAUDE_PLUGIN_ROOT}/scripts/cairn.cjs');
  }, 60_000);
});
