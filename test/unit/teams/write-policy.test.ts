// The write policy's pure rules (src/db/write-policy.ts): the decisions ingest, `remember`, the admin routes,
// import and the move share. The routes' behaviour is tested on the real stack (test/worker/hostile/).
import { describe, expect, it } from 'vitest';
import {
  authorship,
  chooseProject,
  importedProjectKey,
  importSessionKey,
  isServerSessionKey,
  mayImportIntoSession,
  mayWriteLiveSession,
  mayWriteProject,
  type KeyedProject,
} from '../../../src/db/write-policy';

const me = { userId: 1, handle: 'ann' };
const p = (over: Partial<KeyedProject>): KeyedProject => ({
  id: 9,
  key: 'k',
  visibility: 'team',
  ownerUserId: 2,
  ...over,
});
const none = { byKey: null, byAlias: null, shadow: null };

describe('the write policy', () => {
  it('lets a caller write team projects and their own private ones only', () => {
    expect(mayWriteProject(me, p({}))).toBe(true);
    expect(mayWriteProject(me, p({ visibility: 'private', ownerUserId: 1 }))).toBe(true);
    expect(mayWriteProject(me, p({ visibility: 'private', ownerUserId: 2 }))).toBe(false);
    expect(mayWriteProject(me, p({ visibility: 'private', ownerUserId: null }))).toBe(false);
  });

  it("makes a free key as asked, local/ keys always private, and sends a key held privately by another to the caller's shadow", () => {
    expect(chooseProject(me, 'github.com/a/b', none, 'private')).toEqual({
      kind: 'create',
      key: 'github.com/a/b',
      visibility: 'private',
    });
    expect(chooseProject(me, 'local/ann/x', none, 'team')).toEqual({
      kind: 'create',
      key: 'local/ann/x',
      visibility: 'private',
    });
    const theirs = p({ visibility: 'private', ownerUserId: 2 });
    expect(chooseProject(me, 'k', { ...none, byKey: theirs }, 'team')).toEqual({
      kind: 'create',
      key: 'k#ann',
      visibility: 'private',
    });
    const shadow = p({ id: 3, key: 'k#ann', visibility: 'private', ownerUserId: 1 });
    expect(chooseProject(me, 'k', { ...none, byKey: theirs, shadow }, 'team')).toEqual({
      kind: 'use',
      project: shadow,
    });
    expect(
      chooseProject(me, 'k', { ...none, byKey: theirs, shadow: p({ key: 'k#ann', visibility: 'team' }) }, 'team'),
    ).toEqual({ kind: 'unavailable' });
  });

  it("reads an imported project key as the importer's own: their shadow is the key, another's local/ and # are theirs no more", () => {
    expect(importedProjectKey('github.com/a/b#ann', 'ann')).toBe('github.com/a/b');
    expect(importedProjectKey('github.com/a/b#bob', 'ann')).toBe('github.com/a/b%23bob');
    expect(importedProjectKey('local/bob/notes', 'ann')).toBe('local/ann/bob/notes');
    expect(importedProjectKey('local/ann/notes', 'ann')).toBe('local/ann/notes');
  });

  it("imports into a file's session key only when it is free or the importer's own imported session", () => {
    expect(importSessionKey(me, 's1', null)).toBe('s1');
    expect(importSessionKey(me, 's1', { userId: 1, importedAt: 5 })).toBe('s1');
    expect(importSessionKey(me, 's1', { userId: 1, importedAt: null })).toBe('import:1:s1');
    expect(importSessionKey(me, 's1', { userId: 2, importedAt: 5 })).toBe('import:1:s1');
    expect(importSessionKey(me, 'manual:4:2', null)).toBe('import:1:manual:4:2');
    expect(isServerSessionKey('import:1:s1')).toBe(true);
  });

  it("keeps live writes and imports out of each other's sessions", () => {
    expect(mayWriteLiveSession(me, { userId: 1, importedAt: null })).toBe(true);
    expect(mayWriteLiveSession(me, { userId: 1, importedAt: 5 })).toBe(false);
    expect(mayImportIntoSession(me, { userId: 1, importedAt: null })).toBe(false);
    expect(mayImportIntoSession(me, { userId: 2, importedAt: 5 })).toBe(false);
  });

  it("makes every row the caller's, naming another author as provenance only", () => {
    expect(authorship(me, 'bob')).toEqual({ authorUserId: 1, importedAuthor: 'bob' });
    expect(authorship(me, 'ann')).toEqual({ authorUserId: 1, importedAuthor: null });
  });
});
