// The browser tests' rule: run with Chromium, skip loudly without it on a developer's machine, fail in CI.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chromiumAvailable } from '../support/chromium';

afterEach(() => vi.restoreAllMocks());

describe('browser tests without Chromium', () => {
  it('run when Chromium is where they look', () => {
    expect(chromiumAvailable({ CHROMIUM_PATH: '/opt/c' }, (p) => p === '/opt/c')).toBe(true);
  });

  it('are skipped on a developer machine with one line that says how to install it', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(chromiumAvailable({}, () => false)).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    const line = String(warn.mock.calls[0]?.[0]).trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('scripts/install-chromium.sh');
  });

  it('fail in CI instead of being skipped', () => {
    expect(() => chromiumAvailable({ CI: 'true' }, () => false)).toThrow(/cannot run in CI.*install-chromium/);
  });
});
