// The judgement of a record's evidence against a reader's checkout (src/shared/evidence.ts), pure.
import { describe, expect, it } from 'vitest';
import {
  branchKey,
  canonicalEntries,
  evidenceKey,
  evidenceLabel,
  evidenceNote,
  fileEntry,
  fileKey,
  judgeEvidence,
  type CheckoutEntries,
  type RecordEvidence,
} from '#shared/evidence';

const blob = (c: string) => c.repeat(40).slice(0, 40);
const ws = (c: string) => c.repeat(16).slice(0, 16);
const A = blob('a');
const B = blob('b');
const C = blob('c');

const rec = (over: Partial<RecordEvidence> = {}): RecordEvidence => ({
  files: [{ path: 'src/config.ts', blob: A, ws: ws('1') }],
  names: ['parseConfig'],
  ...over,
});
const file = (path: string, b: string | null, w: string | null = null, missing: string[] | null = []) => ({
  [fileKey(path)]: fileEntry({ blob: b, ws: w, missing }),
});

describe('judgeEvidence', () => {
  it('calls a record current when every cited file has the blob it was recorded with', () => {
    expect(judgeEvidence(rec(), file('src/config.ts', A)).value).toBe('current');
  });

  it('calls a record changed when a cited file has another blob, and current again at the old one', () => {
    expect(judgeEvidence(rec(), file('src/config.ts', B))).toEqual({
      value: 'changed',
      reasons: ['code_changed'],
      missingNames: [],
    });
    expect(judgeEvidence(rec(), file('src/config.ts', A)).value).toBe('current');
  });

  it('keeps a record current when the file differs only in whitespace (a formatter run)', () => {
    expect(judgeEvidence(rec(), file('src/config.ts', B, ws('1'))).value).toBe('current');
    expect(judgeEvidence(rec(), file('src/config.ts', B, ws('2'))).value).toBe('changed');
  });

  it('says which cited names occur in none of its files now', () => {
    const missing = [evidenceKey('parseConfig')];
    const j = judgeEvidence(rec(), file('src/config.ts', B, null, missing));
    expect(j).toEqual({ value: 'changed', reasons: ['code_changed', 'names_missing'], missingNames: ['parseConfig'] });
    expect(evidenceNote(j)).toBe('code changed: parseConfig no longer in the code');
  });

  it('says nothing about names when a present file was not checked for them', () => {
    const j = judgeEvidence(rec(), file('src/config.ts', B, null, null));
    expect(j).toEqual({ value: 'changed', reasons: ['code_changed'], missingNames: [] });
  });

  it('counts a name as present when any present cited file still has it', () => {
    const r = rec({
      files: [
        { path: 'a.ts', blob: A },
        { path: 'b.ts', blob: A },
      ],
    });
    const state = { ...file('a.ts', B, null, [evidenceKey('parseConfig')]), ...file('b.ts', A, null, []) };
    expect(judgeEvidence(r, state).missingNames).toEqual([]);
  });

  it('calls a record gone when every cited file is absent, changed when only some are', () => {
    const r = rec({
      files: [
        { path: 'a.ts', blob: A },
        { path: 'b.ts', blob: A },
      ],
    });
    expect(judgeEvidence(r, { ...file('a.ts', null), ...file('b.ts', null) }).value).toBe('gone');
    expect(judgeEvidence(r, { ...file('a.ts', null), ...file('b.ts', A) })).toEqual({
      value: 'changed',
      reasons: ['files_gone'],
      missingNames: [],
    });
  });

  it('is unknown without evidence (older rows) or without a checkout, and judges by the files it knows', () => {
    expect(judgeEvidence(rec({ files: [] }), file('src/config.ts', A))).toMatchObject({
      value: 'unknown',
      reasons: ['no_evidence'],
    });
    expect(judgeEvidence(rec(), null)).toMatchObject({ value: 'unknown', reasons: ['no_checkout'] });
    expect(judgeEvidence(rec(), file('other.ts', A))).toMatchObject({ value: 'unknown', reasons: ['no_checkout'] });
    const two = rec({
      files: [
        { path: 'a.ts', blob: A },
        { path: 'b.ts', blob: A },
      ],
    });
    expect(judgeEvidence(two, file('a.ts', A)).value).toBe('current');
  });

  it('ignores cited files that did not exist when the record was made', () => {
    expect(judgeEvidence(rec({ files: [{ path: 'x.ts', blob: null }] }), file('x.ts', A)).value).toBe('unknown');
  });

  it('marks a record whose changed file is back to its content before the change as reverted', () => {
    const r = rec({ files: [{ path: 'src/config.ts', blob: B, base: A }] });
    expect(judgeEvidence(r, file('src/config.ts', A))).toEqual({
      value: 'changed',
      reasons: ['reverted'],
      missingNames: [],
    });
    expect(judgeEvidence(r, file('src/config.ts', C)).reasons).toEqual(['code_changed']);
    expect(evidenceNote(judgeEvidence(r, file('src/config.ts', A)))).toBe('code changed: its change was reverted');
  });

  it('marks a record of a branch deleted without merging, only when its lineage is unmerged', () => {
    const r = rec({ branch: 'spike/cache' });
    const state: CheckoutEntries = { ...file('src/config.ts', A), [branchKey('spike/cache')]: 'd' };
    expect(judgeEvidence(r, state, { unmerged: true })).toEqual({
      value: 'changed',
      reasons: ['branch_deleted'],
      missingNames: [],
    });
    expect(evidenceNote(judgeEvidence(r, state, { unmerged: true }))).toBe('code changed: branch deleted unmerged');
    expect(judgeEvidence(r, state, { unmerged: false }).value).toBe('current');
    // Still there: its work differs from this checkout by lineage (the ⎇ mark), so its code is not judged.
    expect(judgeEvidence(r, { ...state, [branchKey('spike/cache')]: '1' }, { unmerged: true })).toEqual({
      value: 'unknown',
      reasons: ['unmerged'],
      missingNames: [],
    });
    expect(judgeEvidence(rec({ files: [], branch: 'spike/cache' }), state, { unmerged: true }).value).toBe('changed');
  });

  it('calls a branch this checkout never had deleted only for a record made on this device', () => {
    const r = rec({ branch: 'spike/cache' });
    const state: CheckoutEntries = { ...file('src/config.ts', A), [branchKey('spike/cache')]: '0' };
    expect(judgeEvidence(r, state, { unmerged: true }).reasons).toEqual(['unmerged']);
    expect(judgeEvidence(r, state, { unmerged: true, recordedHere: true }).reasons).toEqual(['branch_deleted']);
  });

  it('checks a file path the text names by its existence, unless it names one of its own files', () => {
    const r = rec({ names: ['src/legacy.ts', 'parseConfig'] });
    const state = { ...file('src/config.ts', B, null, []), ...file('src/legacy.ts', null) };
    expect(judgeEvidence(r, state).missingNames).toEqual(['src/legacy.ts']);
    // Written relative to a package folder: the record's own packages/web/src/config.ts.
    const pkg = rec({ files: [{ path: 'packages/web/src/config.ts', blob: A }], names: ['src/config.ts'] });
    const pkgState = { ...file('packages/web/src/config.ts', B, null, []), ...file('src/config.ts', null) };
    expect(judgeEvidence(pkg, pkgState).missingNames).toEqual([]);
  });

  it('labels a judgement for search and MCP lines', () => {
    expect(evidenceLabel(undefined)).toBe('evidence: unknown');
    expect(evidenceLabel(judgeEvidence(rec(), file('src/config.ts', A)))).toBe('evidence: current');
    expect(evidenceLabel(judgeEvidence(rec(), file('src/config.ts', B)))).toBe('evidence: changed (code changed)');
  });
});

describe('keys and entries', () => {
  it('keys text by 14 hex digits, the same on every call, differently for different text', () => {
    expect(evidenceKey('src/config.ts')).toMatch(/^[0-9a-f]{14}$/);
    expect(evidenceKey('src/config.ts')).toBe(evidenceKey('src/config.ts'));
    expect(evidenceKey('src/config.ts')).not.toBe(evidenceKey('src/config.tS'));
    const keys = new Set(Array.from({ length: 20_000 }, (_, i) => evidenceKey(`src/file-${i}.ts`)));
    expect(keys.size).toBe(20_000);
  });

  it('writes the canonical form sorted by key, whatever the insertion order', () => {
    expect(canonicalEntries({ fb: '1', fa: '-' })).toBe(canonicalEntries({ fa: '-', fb: '1' }));
    expect(canonicalEntries({ fb: '1', fa: '-' })).toBe('fa=-\nfb=1');
  });
});
