// The browser viewer's public part: the page shell (all data comes from /api/*). Its script, stylesheet and
// icon are Workers Static Assets answered without the Worker (wrangler.toml `run_worker_first` leaves out
// /viewer/*), with the security headers and caching viewer/build.mjs writes into `_headers`.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { assets } from '../db/meter-bindings';
import { assetManifest } from '../lib/static-assets';
import { SECURITY_HEADERS, shellHtml } from './page';

export const viewerRoutes = new Hono<AppEnv>();

viewerRoutes.get('/', async (c) => {
  const { viewer } = await assetManifest(assets(c.env));
  return new Response(shellHtml(viewer.version), {
    headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
  });
});
