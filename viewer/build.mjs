// Bundles the viewer's browser code (viewer/src/) into static assets (dist/assets/viewer/), served by Workers Static
// Assets without running the Worker (wrangler.toml `run_worker_first` leaves out /viewer/*): the script and
// stylesheet carry the build's version in their names, so they may be cached forever, and `_headers` gives
// them the viewer's security headers (the same SECURITY_HEADERS the Worker puts on the page shell). Run by
// `npm run build`, which `npm start`, `npm test` and deploy run first.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));

async function bundle(entry, loader) {
  const out = await build({
    entryPoints: [path.join(HERE, 'src', entry)],
    bundle: true,
    minify: true,
    write: false,
    legalComments: 'none',
    charset: 'utf8',
    ...(loader === 'js' ? { format: 'iife', target: 'es2020' } : {}),
  });
  return out.outputFiles[0].text;
}

/** The security headers of src/viewer/page.ts (the Worker's side of the viewer), bundled and loaded here so they are written once. */
async function securityHeaders() {
  const out = await build({
    entryPoints: [path.join(HERE, '../src/viewer/page.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
  });
  const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
  return mod.SECURITY_HEADERS;
}

/** Workers Static Assets `_headers`: every viewer file gets the security headers; the versioned ones are immutable. */
function headersFile(security) {
  const lines = Object.entries(security).map(([k, v]) => `  ${k}: ${v}`);
  return ['/viewer/*', ...lines, '/viewer/app.*', '  cache-control: public, max-age=31536000, immutable', ''].join(
    '\n',
  );
}

/**
 * The viewer's files (path under the assets folder → text, `_headers` included) and a version naming exactly
 * this build; the script's and stylesheet's names carry it (`viewer/app.<version>.js`).
 */
export async function buildViewer() {
  const js = await bundle('main.ts', 'js');
  const css = await bundle('styles.css', 'css');
  const icon = readFileSync(path.join(HERE, 'src', 'icon.svg'), 'utf8').trim();
  const hash = createHash('sha256');
  for (const text of [js, css, icon]) hash.update(text).update('\0');
  const version = hash.digest('hex').slice(0, 12);
  const files = {
    [`viewer/app.${version}.js`]: js,
    [`viewer/app.${version}.css`]: css,
    'viewer/icon.svg': icon,
    _headers: headersFile(await securityHeaders()),
  };
  return { files, version };
}
