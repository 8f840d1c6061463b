// The postinstall patch of @cloudflare/vitest-pool-workers (scripts/patch-vitest-pool-workers.mjs): the pool's
// wrapper classes install their prototype Proxy once instead of once per construction, which is what lets worker
// test files share a runtime without every request getting slower than the last (workers-sdk#15092).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PATCH_MARK,
  POOL_INTERNAL_FILE,
  patchPoolSource,
  poolRewrapsPrototype,
  // @ts-expect-error plain ESM script without types
} from '../../../scripts/patch-vitest-pool-workers.mjs';

/** createProxyPrototypeClass as @cloudflare/vitest-pool-workers 0.15.1 ships it (tabs as in the file). */
const UPSTREAM = [
  'function createProxyPrototypeClass(superClass, getUnknownPrototypeKey) {',
  '\tfunction Class(...args) {',
  '\t\tClass.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {',
  '\t\t\tconst value = Reflect.get(target, key, receiver);',
  '\t\t\tif (value !== void 0) return value;',
  '\t\t\tif (typeof key === "symbol") return;',
  '\t\t\treturn getUnknownPrototypeKey.call(receiver, key);',
  '\t\t} });',
  '\t\treturn Reflect.construct(superClass, args, Class);',
  '\t}',
  '\tReflect.setPrototypeOf(Class.prototype, superClass.prototype);',
  '\tReflect.setPrototypeOf(Class, superClass);',
  '\treturn Class;',
  '}',
].join('\n');

type Factory = (superClass: new () => object, unknownKey: (key: string) => unknown) => new () => object;
/** `source` declares createProxyPrototypeClass; the installed one also reads the module's IGNORED_KEYS. */
const load = (source: string): Factory =>
  new Function(`const IGNORED_KEYS = ['self'];\n${source}\nreturn createProxyPrototypeClass;`)() as Factory;

/** The installed pool's own createProxyPrototypeClass, cut out of the file npm install left (and patched). */
function installedFactorySource(): string {
  const file = readFileSync(POOL_INTERNAL_FILE, 'utf8');
  const start = file.indexOf('function createProxyPrototypeClass(');
  expect(start, `createProxyPrototypeClass in ${POOL_INTERNAL_FILE}`).toBeGreaterThanOrEqual(0);
  const end = file.indexOf('\n}\n', start);
  expect(end).toBeGreaterThan(start);
  return file.slice(start, end + 2);
}

/** How many times the unknown-key hook runs for one read of a key the class lacks, after `constructions` instances. */
function trapsPerRead(source: string, constructions: number): number {
  let calls = 0;
  const Wrapped = load(source)(class Base {}, () => {
    calls += 1;
    return undefined;
  });
  let last: object = {};
  for (let i = 0; i < constructions; i++) last = new Wrapped();
  calls = 0;
  void (last as Record<string, unknown>).missingKey;
  return calls;
}

describe('the vitest-pool-workers patch', () => {
  it('makes a wrapper class answer a read through one proxy however many instances were made', () => {
    const patched = patchPoolSource(UPSTREAM);
    expect(patched.state).toBe('patched');
    expect(trapsPerRead(UPSTREAM, 50)).toBe(50);
    expect(trapsPerRead(patched.text, 50)).toBe(1);
    expect(trapsPerRead(patched.text, 1)).toBe(1);
  });

  it('is idempotent and leaves code it does not recognise alone', () => {
    const once = patchPoolSource(UPSTREAM).text;
    expect(patchPoolSource(once)).toEqual({ text: once, state: 'already' });
    const other = UPSTREAM.replace('new Proxy', 'makeProxy');
    expect(patchPoolSource(other)).toEqual({ text: other, state: 'unknown' });
    expect(poolRewrapsPrototype(UPSTREAM)).toBe(true);
    expect(poolRewrapsPrototype(once)).toBe(false);
  });

  it('is applied to the installed pool, so npm install leaves a runtime that can be shared', () => {
    const installed = readFileSync(POOL_INTERNAL_FILE, 'utf8');
    expect(installed).toContain(PATCH_MARK);
    expect(poolRewrapsPrototype(installed)).toBe(false);
    // The code the worker tests run: its wrapper class answers a read through one proxy after 50 instances.
    const factory = installedFactorySource();
    expect(trapsPerRead(factory, 50)).toBe(1);
    expect(trapsPerRead(factory, 1)).toBe(1);
  });

  it('leaves an install without devDependencies alone instead of failing it', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'cairn-pool-patch-'));
    try {
      mkdirSync(path.join(root, 'scripts'));
      copyFileSync(
        'scripts/patch-vitest-pool-workers.mjs',
        path.join(root, 'scripts', 'patch-vitest-pool-workers.mjs'),
      );
      const run = spawnSync(process.execPath, [path.join(root, 'scripts', 'patch-vitest-pool-workers.mjs')], {
        encoding: 'utf8',
      });
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('nothing to patch');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
