// The committed artifacts (Worker-embedded bundle, plugin copy) are the build of the current sources.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildClient } from '../build.mjs';

const file = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

describe('build', () => {
  it('writes one self-contained file that the Worker embeds and the plugin ships', async () => {
    const { code, version, sha256 } = await buildClient({ quiet: true });
    // Plain script: no module syntax, so one text runs as cairn.mjs and as the faster-starting cairn.cjs.
    expect(code).not.toMatch(/^[ \t]*(?:import(?:[ \t]+[\w{*]|[ \t]*[{'"*])|export[ \t])|\bimport(?:\.meta|\s*\()|\brequire\(/m);
    expect(readFileSync(file('../dist/cairn.mjs'), 'utf8')).toBe(code);
    expect(readFileSync(file('../dist/cairn.cjs'), 'utf8')).toBe(code);
    expect(readFileSync(file('../../plugin/scripts/cairn.cjs'), 'utf8')).toBe(code);
    const generated = readFileSync(file('../../src/install/client-bundle.generated.ts'), 'utf8');
    expect(generated).toContain(JSON.stringify(version));
    expect(generated).toContain(JSON.stringify(sha256));
  }, 60_000);

  it('loads node built-ins through process.getBuiltinModule, and net only for a hook', async () => {
    const { code } = await buildClient({ quiet: true });
    expect(code).toContain('process.getBuiltinModule("node:net")');
    expect(code).not.toMatch(/getBuiltinModule\("node:(?:http|crypto)"\)/);
    // child_process only where `cairn install` runs the claude CLI, loaded at that call, never at start-up.
    expect(code.split('node:child_process')).toHaveLength(2);
    expect(code).toMatch(/getBuiltinModule\(\\?"node:child_process\\?"\)\.spawnSync\(/);
    const plugin = JSON.parse(readFileSync(file('../../plugin/hooks/hooks.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ args: string[] }> }>> };
    for (const entries of Object.values(plugin.hooks)) expect(entries[0]!.hooks[0]!.args[0]).toBe('${CLAUDE_PLUGIN_ROOT}/scripts/cairn.cjs');
  }, 60_000);
});
