// The browser viewer's public part: the page shell and its static assets (all data comes from /api/*).
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { APP_CSS, APP_JS, ASSET_VERSION, ICON_SVG } from './assets.generated';
import { SECURITY_HEADERS, shellHtml } from './page';

export const viewerRoutes = new Hono<AppEnv>();

const SHELL = shellHtml(ASSET_VERSION);

function asset(body: string, type: string, versioned: boolean): Response {
  return new Response(body, {
    headers: {
      ...SECURITY_HEADERS,
      'content-type': type,
      // A request naming the current version may be cached forever; anything else must revalidate.
      'cache-control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
      etag: `"${ASSET_VERSION}"`,
    },
  });
}

viewerRoutes.get('/', () => new Response(SHELL, { headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' } }));
viewerRoutes.get('/viewer/app.js', (c) => asset(APP_JS, 'text/javascript; charset=utf-8', c.req.query('v') === ASSET_VERSION));
viewerRoutes.get('/viewer/app.css', (c) => asset(APP_CSS, 'text/css; charset=utf-8', c.req.query('v') === ASSET_VERSION));
viewerRoutes.get('/viewer/icon.svg', (c) => asset(ICON_SVG, 'image/svg+xml', c.req.query('v') === ASSET_VERSION));
