// On a Node older than the client needs, the client says so in one line instead of throwing a stack trace.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../build.mjs';
import { nodeVersionProblem } from '../../src/node-version';
import { machine, tempDir } from '../support';

const exec = promisify(execFile);
const CLIENT = fileURLToPath(new URL('../../dist/cairn.cjs', import.meta.url));

beforeAll(async () => {
  await buildClient({ quiet: true });
}, 60_000);

/** A preload that makes this Node look like 20.10 (no process.getBuiltinModule), as an old Node would be. */
function oldNodePreload(): string {
  const file = join(tempDir(), 'old-node.cjs');
  writeFileSync(
    file,
    `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.10.0' } });\n` +
      `Object.defineProperty(process, 'version', { value: 'v20.10.0' });\n` +
      `delete process.getBuiltinModule;\n`,
  );
  return file;
}

async function runOld(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { env } = machine(null);
  try {
    const r = await exec(process.execPath, ['--require', oldNodePreload(), CLIENT, ...args], { env, timeout: 10_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('node version check', () => {
  it('accepts Node 20.16 and later, and refuses older ones or one without process.getBuiltinModule', () => {
    expect(nodeVersionProblem('20.16.0', true)).toBeNull();
    expect(nodeVersionProblem('v22.3.1', true)).toBeNull();
    expect(nodeVersionProblem('24.0.0', true)).toBeNull();
    expect(nodeVersionProblem('20.15.1', true)).toContain('20.16');
    expect(nodeVersionProblem('18.20.4', true)).toContain('v18.20.4');
    expect(nodeVersionProblem('20.18.0', false)).toContain('20.16');
  });

  it('prints one clear line and exits 1 when a command runs on an old Node', async () => {
    const r = await runOld(['status']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^cairn needs Node\.js 20\.16 or newer, and this is Node\.js v20\.10\.0/),
    ]);
    expect(r.stderr).not.toMatch(/TypeError|\n\s+at /);
  });

  it('lets the agent go on when a hook runs on an old Node: exit 0, the same one line on stderr', async () => {
    const r = await runOld(['hook', 'post-tool-use']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('20.16');
  });
});
