// Team settings that shape the context index: observation_types and observation_concepts narrow what it
// lists, context_full_count sets how many of the newest rows show their narrative.
import { describe, expect, it } from 'vitest';
import { call } from '../support/http';
import { seedWorld } from '../support/seed';

const T0 = Date.parse('2026-05-04T09:00:00Z');

async function world() {
  const w = await seedWorld();
  await w.add({
    type: 'bugfix',
    title: 'Cache key includes locale',
    narrative: 'NARRATIVE-A',
    concepts: ['gotcha'],
    createdAt: T0,
  });
  await w.add({
    type: 'discovery',
    title: 'Router reads the cookie',
    narrative: 'NARRATIVE-B',
    concepts: ['how-it-works'],
    createdAt: T0 + 1_000,
  });
  await w.add({
    type: 'decision',
    title: 'Negotiation stays server-side',
    narrative: 'NARRATIVE-C',
    concepts: ['trade-off'],
    createdAt: T0 + 2_000,
  });
  return w;
}

const settings = (token: string, json: Record<string, unknown>) =>
  call('/api/admin/settings', { token, method: 'PATCH', json });
const context = async (token: string, key: string, extra = '') =>
  (await call(`/api/context?project=${encodeURIComponent(key)}${extra}`, { token })).text();

describe('context settings of a team', () => {
  it('lists only the types in observation_types', async () => {
    const w = await world();
    expect((await settings(w.id.token, { observation_types: ['bugfix', 'decision'] })).status).toBe(200);
    const text = await context(w.id.token, w.key);
    expect(text).toContain('Cache key includes locale');
    expect(text).toContain('Negotiation stays server-side');
    expect(text).not.toContain('Router reads the cookie');
  });

  it('lists only observations with a concept in observation_concepts', async () => {
    const w = await world();
    expect((await settings(w.id.token, { observation_concepts: ['gotcha'] })).status).toBe(200);
    const text = await context(w.id.token, w.key);
    expect(text).toContain('Cache key includes locale');
    expect(text).not.toContain('Router reads the cookie');
    expect(text).not.toContain('Negotiation stays server-side');
  });

  it('shows the narrative of the newest context_full_count rows, unless the request says otherwise', async () => {
    const w = await world();
    const before = await context(w.id.token, w.key);
    expect(before).not.toContain('NARRATIVE-C');
    expect((await settings(w.id.token, { context_full_count: 1 })).status).toBe(200);
    const after = await context(w.id.token, w.key);
    expect(after).toContain('NARRATIVE-C');
    expect(after).not.toContain('NARRATIVE-B');
    expect(await context(w.id.token, w.key, '&full=0')).not.toContain('NARRATIVE-C');
  });
});
