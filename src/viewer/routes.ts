// The browser viewer's public part: the page shell and its static assets (all data comes from /api/*).
// The files are Workers Static Assets built by scripts/build.mjs; this adds the CSP and version caching.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { assetManifest, fetchAsset } from '../lib/static-assets';
import { SECURITY_HEADERS, shellHtml } from './page';

export const viewerRoutes = new Hono<AppEnv>();

const FILES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

viewerRoutes.get('/', async (c) => {
  const { viewer } = await assetManifest(c.env.ASSETS);
  return new Response(shellHtml(viewer.version), {
    headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
  });
});

viewerRoutes.get('/viewer/:file', async (c) => {
  const file = c.req.param('file');
  const type = FILES[file];
  if (!type) return c.notFound();
  const { viewer } = await assetManifest(c.env.ASSETS);
  const asset = await fetchAsset(c.env.ASSETS, `/viewer/${file}`);
  // A request naming the current version may be cached forever; anything else must revalidate.
  const versioned = c.req.query('v') === viewer.version;
  return new Response(asset.body, {
    headers: {
      ...SECURITY_HEADERS,
      'content-type': type,
      'cache-control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
      etag: `"${viewer.version}"`,
    },
  });
});
