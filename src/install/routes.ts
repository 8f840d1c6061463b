// Serves the bundled hooks client so a new machine needs only Node and the URL; the file is the one built
// with this Worker (embedded at build time), so client and server versions always match.
import { Hono } from 'hono';
import type { AppEnv } from '../auth/types';
import { CLIENT_SHA256, CLIENT_SOURCE, CLIENT_VERSION } from './client-bundle.generated';

export const installRoutes = new Hono<AppEnv>();

installRoutes.get('/install/cairn.mjs', (c) => {
  const etag = `"${CLIENT_SHA256}"`;
  const headers = {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': 'no-cache',
    etag,
    'x-cairn-client-version': CLIENT_VERSION,
    'x-cairn-client-sha256': CLIENT_SHA256,
    'content-disposition': 'attachment; filename="cairn.mjs"',
  };
  if (c.req.header('if-none-match') === etag) return c.body(null, 304, headers);
  return c.body(CLIENT_SOURCE, 200, headers);
});
