// npm run build: everything the Worker serves that is built rather than written — the hooks client and the
// viewer's browser code — into dist/assets/ (the Worker's ASSETS binding), with a manifest naming their
// versions. `npm start`, `npm test` and deploy run it first; nothing generated lives under src/.
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildClient, writeIfChanged } from '../hooks-client/build.mjs';
import { buildViewer } from '../viewer/build.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ASSETS_DIR = path.join(ROOT, 'dist', 'assets');

export async function buildAll({ quiet = false, writePlugin = false } = {}) {
  const client = await buildClient({ quiet, writePlugin });
  const viewer = await buildViewer();
  writeIfChanged(path.join(ASSETS_DIR, 'install', 'cairn.mjs'), client.code);
  for (const [rel, text] of Object.entries(viewer.files)) writeIfChanged(path.join(ASSETS_DIR, rel), text);
  // Earlier builds' versioned viewer files would be uploaded with every deploy: keep only this build's.
  for (const name of readdirSync(path.join(ASSETS_DIR, 'viewer'))) {
    if (!Object.hasOwn(viewer.files, `viewer/${name}`)) rmSync(path.join(ASSETS_DIR, 'viewer', name), { force: true });
  }
  const manifest = { client: { version: client.version, sha256: client.sha256 }, viewer: { version: viewer.version } };
  writeIfChanged(path.join(ASSETS_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { client, viewer, manifest };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--clean')) rmSync(ASSETS_DIR, { recursive: true, force: true });
  const { manifest } = await buildAll({ writePlugin: process.argv.includes('--plugin') });
  console.log(
    `assets: client ${manifest.client.version}, viewer ${manifest.viewer.version} → ${path.relative(process.cwd(), ASSETS_DIR)}`,
  );
}
