// The names a record cites (src/shared/names.ts): identifiers of code, flags, routes and file paths; plain words
// are not names. Linear: the scan stops at its budget.
import { describe, expect, it } from 'vitest';
import { isPathName, MAX_NAMES, nameOf, namesIn, NAMES_SCAN_CHARS } from '#shared/names';

describe('namesIn', () => {
  it('finds functions, types, constants, flags, routes and file paths in a record text', () => {
    const text =
      'Renamed parseConfig() to loadSettings in src/config.ts; HookContext keeps MAX_CONTEXT_CHARS, ' +
      'the --dry-run flag skips the POST to /api/context and git_commit is sent. See README for more.';
    expect(namesIn([text])).toEqual([
      'parseConfig',
      'loadSettings',
      'src/config.ts',
      'HookContext',
      'MAX_CONTEXT_CHARS',
      '--dry-run',
      '/api/context',
      'git_commit',
    ]);
  });

  it('takes the last part of a member access and a called short word, not plain words or numbers', () => {
    expect(nameOf('this.retryCount')).toBe('retryCount');
    expect(nameOf('ky.extend()')).toBe('extend');
    expect(nameOf('ky.extend')).toBeNull();
    expect(nameOf('Object.keys')).toBeNull();
    for (const plain of [
      'the',
      'README',
      'Fixed',
      '1.2.3',
      'https://example.com/a.ts',
      '/home/ada/x.ts',
      'TypeScript',
      'GitHub',
      'macOS',
    ])
      expect(nameOf(plain)).toBeNull();
  });

  it('tells file paths from identifiers', () => {
    expect(isPathName('src/config.ts')).toBe(true);
    expect(isPathName('config.ts')).toBe(false);
    expect(nameOf('config.ts')).toBeNull();
    expect(isPathName('parseConfig')).toBe(false);
    expect(isPathName('/api/context')).toBe(false);
  });

  it('keeps at most MAX_NAMES, first seen first, without repeats', () => {
    const many = Array.from({ length: 40 }, (_, i) => `fooBar${i} fooBar${i}`).join(' ');
    const names = namesIn([many]);
    expect(names).toHaveLength(MAX_NAMES);
    expect(names[0]).toBe('fooBar0');
    expect(new Set(names).size).toBe(MAX_NAMES);
  });

  it('reads only the first NAMES_SCAN_CHARS characters of all texts together', () => {
    const pad = 'x '.repeat(NAMES_SCAN_CHARS / 2);
    expect(namesIn([pad, 'lateName'])).toEqual([]);
    expect(namesIn(['earlyName', pad])).toEqual(['earlyName']);
  });
});
