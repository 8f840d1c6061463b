// Bundles the hooks client into one file (hooks-client/dist/cairn.mjs). scripts/build.mjs puts the same
// file into the Worker's static assets, so GET /install/cairn.mjs serves exactly this build, and
// `npm run build:plugin` copies it into plugin/scripts/ (committed: plugins install from git).
// The file is boot.ts with the client (cli.ts and everything it imports) inside as a string, which boot.ts
// compiles with V8's code cache.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

// ESM `import … from 'node:x'` builds a module facade per builtin at start-up (~10 ms for the handful we use);
// process.getBuiltinModule (Node ≥ 20.16) hands over the loaded module directly, and only when the importing
// module is first evaluated, so builtins used only by rarely-run commands are never loaded on the hook path.
// Each importer gets its own tiny module exporting just the names it imports: reading every property of a
// builtin would trip its lazy getters (fs.promises loads a module of its own).
const IMPORT_FROM = /import\s*\{([^}]*)\}\s*from\s*['"](node:[\w/]+)['"]/g;
function importedNames(importer, builtin) {
  const names = new Set();
  for (const m of readFileSync(importer, 'utf8').matchAll(IMPORT_FROM)) {
    if (m[2] !== builtin) continue;
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]
        .trim();
      if (name && !part.trim().startsWith('type ')) names.add(name);
    }
  }
  return [...names];
}
const builtinsViaProcess = {
  name: 'builtins-via-process',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => ({
      path: `${args.path}?${path.relative(ROOT, args.importer)}`,
      namespace: 'node-builtin',
    }));
    b.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => {
      const [builtin, importer] = args.path.split('?');
      const names = importedNames(path.resolve(ROOT, importer), builtin);
      const id = JSON.stringify(builtin);
      return {
        contents: `const m = process.getBuiltinModule(${id});\nexport default m;\n${names.map((k) => `export const ${k} = m.${k};`).join('\n')}\n`,
        loader: 'js',
      };
    });
  },
};

const options = {
  entryPoints: [path.join(HERE, 'src', 'cli.ts')],
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  // Plain script (no import/export, no import.meta): the same text runs as cairn.mjs or cairn.cjs, and the
  // .cjs name skips Node's ES module loader at start-up.
  format: 'iife',
  target: 'node20',
  write: false,
  legalComments: 'none',
  logLevel: 'error',
  plugins: [builtinsViaProcess],
};

/** Writes only when the content changed, atomically (other engineers' test runs may read it concurrently). */
export function writeIfChanged(file, text, mode) {
  let old = null;
  try {
    old = readFileSync(file, 'utf8');
  } catch {}
  if (old !== text) {
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  }
  if (mode) chmodSync(file, mode);
}

const bootOptions = { ...options, entryPoints: [path.join(HERE, 'src', 'boot.ts')] };
const PROBE_DEFINE = { __CAIRN_VERSION__: '"probe"', __CAIRN_BODY__: '""', __CAIRN_BODY_HASH__: '"probe"' };

/**
 * plugin/hooks/hooks.json and plugin/.mcp.json come from the same plan `cairn install` uses
 * (hooks-client/src/agents/claude-code.ts), so the plugin follows every change of events, matchers or timeouts.
 */
export async function writePluginFiles() {
  const out = await build({
    ...options,
    entryPoints: [path.join(HERE, 'src', 'agents', 'claude-code.ts')],
    format: 'esm',
    plugins: [],
    external: ['node:*'],
  });
  const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
  for (const [rel, text] of Object.entries(mod.pluginFiles())) writeIfChanged(path.join(ROOT, rel), text);
}

/** The plugin's copy of the client: committed, so a test compares it with a fresh build. */
export const PLUGIN_COPY = path.join(ROOT, 'plugin', 'scripts', 'cairn.cjs');

export async function buildClient({ quiet = false, writePlugin = false } = {}) {
  await writePluginFiles();
  // Pass 1 finds the inputs; their hash names the version, so any source change changes it.
  const inputs = new Set();
  for (const o of [options, bootOptions]) {
    const probe = await build({ ...o, metafile: true, define: PROBE_DEFINE });
    for (const input of Object.keys(probe.metafile.inputs)) inputs.add(input);
  }
  const srcHash = createHash('sha256');
  for (const input of [...inputs].sort()) {
    srcHash.update(input);
    if (!input.startsWith('node-builtin:')) srcHash.update(readFileSync(path.resolve(ROOT, input)));
  }
  const version = `${pkg.version}+${srcHash.digest('hex').slice(0, 10)}`;
  const client = await build({ ...options, define: { __CAIRN_VERSION__: JSON.stringify(version) } });
  const body = client.outputFiles[0].text;
  const result = await build({
    ...bootOptions,
    define: {
      __CAIRN_BODY__: JSON.stringify(body),
      __CAIRN_BODY_HASH__: JSON.stringify(createHash('sha256').update(body).digest('hex').slice(0, 16)),
    },
    banner: {
      js: '#!/usr/bin/env node\n// cairn hooks client (generated by hooks-client/build.mjs; edit hooks-client/src instead).',
    },
  });
  const code = result.outputFiles[0].text;
  const sha256 = createHash('sha256').update(code).digest('hex');
  writeIfChanged(path.join(HERE, 'dist', 'cairn.mjs'), code, 0o755);
  writeIfChanged(path.join(HERE, 'dist', 'cairn.cjs'), code, 0o755);
  if (writePlugin) writeIfChanged(PLUGIN_COPY, code, 0o755);
  if (!quiet)
    console.log(`cairn client ${version}: ${(code.length / 1024).toFixed(1)} KiB, sha256 ${sha256.slice(0, 12)}`);
  return { version, sha256, code };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildClient({ writePlugin: process.argv.includes('--plugin') });
}
