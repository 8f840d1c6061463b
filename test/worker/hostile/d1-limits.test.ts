// Issue 14, row 6: D1 refuses statements over 100 bound parameters. Search and the viewer feed bind each
// list as one parameter, so 10 project keys resolving to 3 projects each plus every filter at 10 values answer.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call, fresh, newIdentity } from '../support/http';
import { idsOf, seedObservation, seedProject, seedSession } from '../support/seed';
import { json } from '../teams/support';

const ten = (prefix: string) => Array.from({ length: 10 }, (_, i) => `${prefix}${i}`);

describe("bound parameters stay under D1's limit by construction", () => {
  it('answers a search with 10 keys of 3 projects each and every filter at 10 values, and still finds the match', async () => {
    const me = await newIdentity();
    const ids = await idsOf(me);
    const keys: string[] = [];
    let target = 0;
    for (let i = 0; i < 10; i++) {
      const key = `github.com/${fresh('acme')}/r${i}`;
      keys.push(key);
      const own = await seedProject(ids, key);
      const aliased = await seedProject(ids, `${key}-renamed`);
      await env.DB.prepare('INSERT INTO project_aliases (team_id, key, project_id, created_at) VALUES (?, ?, ?, ?)')
        .bind(ids.teamId, key, aliased, Date.now())
        .run();
      await seedProject(ids, `${key}#${me.user}`, 'private');
      if (i === 0) {
        const s = await seedSession(ids, own, fresh('s'));
        target = await seedObservation(ids, own, s, {
          title: 'Quokka limiter rewrite',
          narrative: 'quokka',
          type: 'decision',
          concepts: ['trade-off'],
          filesModified: ['src/quokka.ts'],
        });
      }
    }
    const q = new URLSearchParams({ q: 'quokka', kind: 'all', since: '2000-01-01', until: '2100-01-01' });
    for (const k of keys) q.append('project', k);
    for (const [name, values] of [
      ['type', ['decision', ...ten('t').slice(1)]],
      ['concept', ['trade-off', ...ten('c').slice(1)]],
      ['file', ['src/quokka.ts', ...ten('f').slice(1)]],
      ['author', [me.user, ...ten('a').slice(1)]],
      ['platform', ['claude-code', ...ten('p').slice(1)]],
    ] as const)
      for (const v of values) q.append(name, v);
    const res = await call(`/api/search?${q.toString()}`, { token: me.token });
    const body = await json<{ results: { id: number }[] }>(res);
    expect(body.results.map((r) => r.id)).toContain(target);
  });

  it('answers the viewer feed over 10 keys of 3 projects each with every item', async () => {
    const me = await newIdentity();
    const ids = await idsOf(me);
    const keys: string[] = [];
    for (let i = 0; i < 10; i++) {
      const key = `github.com/${fresh('acme')}/v${i}`;
      keys.push(key);
      const p = await seedProject(ids, key);
      const aliased = await seedProject(ids, `${key}-renamed`);
      await env.DB.prepare('INSERT INTO project_aliases (team_id, key, project_id, created_at) VALUES (?, ?, ?, ?)')
        .bind(ids.teamId, key, aliased, Date.now())
        .run();
      await seedProject(ids, `${key}#${me.user}`, 'private');
      await seedObservation(ids, p, await seedSession(ids, p, fresh('s')), { title: `feed item ${i}` });
    }
    const q = new URLSearchParams();
    for (const k of keys) q.append('project', k);
    const body = await json<{ items: { title?: string }[] }>(
      await call(`/api/viewer/feed?${q.toString()}`, { token: me.token }),
    );
    expect(body.items.filter((it) => it.title?.startsWith('feed item'))).toHaveLength(10);
  });
});
