// Search API: GET /api/search (hybrid FTS5 + vectors) and the admin vector backfill.
import { Hono } from 'hono';
import { requireScope } from '../auth/middleware';
import type { AppEnv } from '../env';
import { renderSearchText } from './render';
import { searchObservations } from './search';

export const searchRoutes = new Hono<AppEnv>();

searchRoutes.get('/api/search', requireScope('read'), async (c) => {
  const url = new URL(c.req.url);
  const one = (k: string) => url.searchParams.get(k) ?? undefined;
  const many = (k: string) => url.searchParams.getAll(k);
  const res = await searchObservations(c.env, c.get('auth'), {
    q: one('q'),
    project: many('project'),
    type: many('type'),
    concept: many('concept'),
    file: many('file'),
    author: many('author'),
    since: one('since'),
    until: one('until'),
    limit: one('limit'),
    offset: one('offset'),
  });
  if (one('format') === 'text') {
    return c.text(renderSearchText(res, Number(one('offset') ?? 0) || 0));
  }
  return c.json({
    results: res.results.map((r) => ({
      id: r.id,
      time: new Date(r.createdAt).toISOString(),
      type: r.type,
      title: r.title,
      project: r.projectKey,
      author: r.author,
      tokens: r.tokens,
      score: r.score,
    })),
    total: res.total,
    mode: res.mode,
  });
});
