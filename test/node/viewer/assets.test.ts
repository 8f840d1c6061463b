// The viewer's build is deterministic, the browser code type-checks, and its pure helpers behave.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFrame, withQuery } from '../../../viewer/src/wire';
import { pickLang, relativeTime, translate, typeLabel } from '../../../viewer/src/i18n';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('viewer assets', () => {
  it('builds the viewer into versioned static files, the same version for the same sources', async () => {
    const build = (await import(new URL('../../../viewer/build.mjs', import.meta.url).href)) as {
      buildViewer(): Promise<{ files: Record<string, string>; version: string }>;
    };
    const a = await build.buildViewer();
    const b = await build.buildViewer();
    expect(a.version).toMatch(/^[0-9a-f]{12}$/);
    expect(Object.keys(a.files).sort()).toEqual([
      '_headers',
      `viewer/app.${a.version}.css`,
      `viewer/app.${a.version}.js`,
      'viewer/icon.svg',
    ]);
    expect(a.files[`viewer/app.${a.version}.js`]).toContain('/api/viewer/me');
    expect(b.version).toBe(a.version);
    // The assets server answers /viewer/* without the Worker: _headers carries the page's security headers.
    const { SECURITY_HEADERS } = await import('../../../src/viewer/page');
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(a.files._headers).toContain(`  ${k}: ${v}\n`);
    expect(a.files._headers).toMatch(/^\/viewer\/app\.\*\n {2}cache-control: public, max-age=31536000, immutable$/m);
  });

  it('type-checks the browser code with the DOM library', () => {
    const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'viewer'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('builds no HTML from strings in the browser code', () => {
    for (const f of ['main.ts', 'views.ts', 'dom.ts', 'api.ts', 'i18n.ts', 'wire.ts']) {
      const src = readFileSync(path.join(ROOT, 'viewer/src', f), 'utf8');
      expect(src, f).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    }
  });
});

describe('viewer client helpers', () => {
  it('parses server-sent event frames and ignores heartbeats and junk', () => {
    expect(parseFrame('event: item\ndata: {"id":1}')).toEqual({ event: 'item', data: { id: 1 } });
    expect(parseFrame('retry: 3000\nevent: ready\ndata: {}')).toEqual({ event: 'ready', data: {} });
    expect(parseFrame(': ping')).toBeNull();
    expect(parseFrame('event: item\ndata: {not json')).toBeNull();
  });

  it('builds query strings without empty values and with repeated keys', () => {
    expect(withQuery('/api/x', { a: '1', b: '', c: undefined, p: ['x y', 'z'] })).toBe('/api/x?a=1&p=x+y&p=z');
    expect(withQuery('/api/x', {})).toBe('/api/x');
  });

  it('picks Chinese for Chinese browsers unless the user chose otherwise', () => {
    expect(pickLang(null, 'zh-CN')).toBe('zh');
    expect(pickLang(null, 'zh-TW')).toBe('zh');
    expect(pickLang(null, 'en-GB')).toBe('en');
    expect(pickLang('en', 'zh-CN')).toBe('en');
    expect(pickLang('fr', 'de')).toBe('en');
  });

  it('fills placeholders and labels types in both languages', () => {
    expect(translate('en', 'resultsFor', { q: 'auth' })).toBe('Results for “auth”');
    expect(translate('zh', 'resultsFor', { q: '认证' })).toBe('“认证” 的搜索结果');
    expect(typeLabel('zh', 'bugfix')).toBe('缺陷修复');
    expect(typeLabel('en', 'custom_type')).toBe('custom_type');
  });

  it('says how long ago something happened relative to the given now', () => {
    const now = Date.UTC(2026, 0, 10, 12);
    expect(relativeTime('en', now - 5_000, now)).toBe('now');
    expect(relativeTime('en', now - 3 * 60_000, now)).toBe('3 minutes ago');
    expect(relativeTime('zh', now - 2 * 3_600_000, now)).toBe('2小时前');
    expect(relativeTime('en', now - 30 * 86_400_000, now)).toMatch(/2025/);
  });
});
