// The committed artifacts (Worker-embedded bundle, plugin copy) are the build of the current sources.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildClient } from '../build.mjs';

const file = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

describe('build', () => {
  it('writes one self-contained file that the Worker embeds and the plugin ships', async () => {
    const { code, version, sha256 } = await buildClient({ quiet: true });
    expect(code).not.toMatch(/from\s+["'](?!node:)[^"']+["']/); // only node: built-ins are imported
    expect(readFileSync(file('../dist/cairn.mjs'), 'utf8')).toBe(code);
    expect(readFileSync(file('../../plugin/scripts/cairn.mjs'), 'utf8')).toBe(code);
    const generated = readFileSync(file('../../src/install/client-bundle.generated.ts'), 'utf8');
    expect(generated).toContain(JSON.stringify(version));
    expect(generated).toContain(JSON.stringify(sha256));
  }, 60_000);
});
