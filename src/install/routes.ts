// Serves the bundled hooks client so a new machine needs only Node and the URL; the file is the one built
// with this Worker (a static asset of the same deploy), so client and server versions always match.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { assets } from '../db/meter-bindings';
import { assetManifest, fetchAsset } from '../lib/static-assets';

export const installRoutes = new Hono<AppEnv>();

installRoutes.get('/install/cairn.mjs', async (c) => {
  const { client } = await assetManifest(assets(c.env));
  const etag = `"${client.sha256}"`;
  const headers = {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': 'no-cache',
    etag,
    'x-cairn-client-version': client.version,
    'x-cairn-client-sha256': client.sha256,
    'content-disposition': 'attachment; filename="cairn.mjs"',
  };
  if (c.req.header('if-none-match') === etag) return c.body(null, 304, headers);
  const file = await fetchAsset(assets(c.env), '/install/cairn.mjs');
  return new Response(file.body, { status: 200, headers });
});
