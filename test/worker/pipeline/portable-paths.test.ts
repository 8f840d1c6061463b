// One repository, two machines, two absolute paths: file history is stored relative to the project root.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { relativeToRoot, relativeToRoots } from '#shared/paths';
import { call, fresh, newIdentity } from '../support/http';
import { initEvent, script, send, settled, toolEvent, waitFor } from './support';

describe('paths relative to the project root', () => {
  it('strips the root from paths inside it and leaves others alone', () => {
    expect(relativeToRoot('/Users/alice/widgets/src/a.ts', '/Users/alice/widgets')).toBe('src/a.ts');
    expect(relativeToRoot('/Users/alice/widgets/src/a.ts', '/Users/alice/widgets/')).toBe('src/a.ts');
    expect(relativeToRoot('/Users/alice/widgets-old/a.ts', '/Users/alice/widgets')).toBe(
      '/Users/alice/widgets-old/a.ts',
    );
    expect(relativeToRoot('src/a.ts', '/Users/alice/widgets')).toBe('src/a.ts');
    expect(relativeToRoot('C:\\Src\\Widgets\\lib\\b.ts', 'c:\\src\\widgets')).toBe('lib/b.ts');
    expect(relativeToRoot('/etc/hosts', null)).toBe('/etc/hosts');
  });

  it('uses the deepest root that contains a path and drops duplicates', () => {
    expect(relativeToRoots(['/r/app/x.ts', '/r/x.ts', 'x.ts'], ['/r', '/r/app'])).toEqual(['x.ts']);
    expect(relativeToRoots(['/r/app/x.ts', '/other/y.ts'], ['/r'])).toEqual(['app/x.ts', '/other/y.ts']);
  });

  it("lets a second machine with another checkout path find the first machine's file history", {
    timeout: 30_000,
  }, async () => {
    const alice = await newIdentity();
    const sid = fresh('s');
    const scenario = fresh('paths');
    const root = '/Users/alice/widgets';
    await script(scenario, []);
    await send(alice.token, 'init', initEvent(sid, 'Fix the parser', { project_root: root }));
    await send(
      alice.token,
      'observations',
      toolEvent(sid, `SCENARIO:${scenario}`, {
        tool_name: 'Edit',
        tool_input: { file_path: `${root}/src/parser.ts`, old_string: 'a', new_string: `b SCENARIO:${scenario}` },
        tool_response: { filePath: `${root}/src/parser.ts`, success: true },
        project_root: root,
      }),
    );
    await waitFor(alice.token, sid, (s) => settled(s) && s.observations_stored >= 1);

    const stored = await env.DB.prepare(
      `SELECT o.files_modified, f.path FROM observations o JOIN sessions s ON s.id = o.session_id
         JOIN observation_files f ON f.observation_id = o.id WHERE s.session_key = ?`,
    )
      .bind(sid)
      .all<{ files_modified: string; path: string }>();
    expect(stored.results.length).toBeGreaterThan(0);
    for (const r of stored.results) {
      expect(JSON.parse(r.files_modified)).toEqual(['src/parser.ts']);
      expect(r.path).toBe('src/parser.ts');
    }

    // Bob's checkout lives elsewhere; his client sends the absolute path and the root-relative one.
    const bob = await newIdentity({ team: alice.team });
    const q = new URLSearchParams({ project: 'github.com/acme/widgets', mtime: '0' });
    q.append('path', '/home/bob/code/widgets/src/parser.ts');
    q.append('path', 'src/parser.ts');
    const res = await call(`/api/context/file?${q}`, { token: bob.token });
    expect(res.status).toBe(200);
    const title = await env.DB.prepare(
      'SELECT o.title FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.session_key = ?',
    )
      .bind(sid)
      .first<{ title: string }>();
    expect(await res.text()).toContain(title!.title.slice(0, 40));
  });
});
