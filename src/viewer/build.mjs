// Bundles the viewer's browser code (client/) into static assets the Worker serves from its ASSETS binding
// (dist/assets/viewer/). Run by `npm run build`, which `npm start`, `npm test` and deploy run first.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));

async function bundle(entry, loader) {
  const out = await build({
    entryPoints: [path.join(HERE, 'client', entry)],
    bundle: true,
    minify: true,
    write: false,
    legalComments: 'none',
    charset: 'utf8',
    ...(loader === 'js' ? { format: 'iife', target: 'es2020' } : {}),
  });
  return out.outputFiles[0].text;
}

/** The viewer's files (path under the assets folder → text) and a version naming exactly this build. */
export async function buildViewer() {
  const files = {
    'viewer/app.js': await bundle('main.ts', 'js'),
    'viewer/app.css': await bundle('styles.css', 'css'),
    'viewer/icon.svg': readFileSync(path.join(HERE, 'client', 'icon.svg'), 'utf8').trim(),
  };
  const hash = createHash('sha256');
  for (const text of Object.values(files)) hash.update(text).update('\0');
  return { files, version: hash.digest('hex').slice(0, 12) };
}
