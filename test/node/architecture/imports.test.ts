// The direction of imports, read from the source: folders of src/ form no cycle, the shared module stands
// alone, and the hooks client reaches the Worker's code only through `#shared/*`. See docs/architecture.md.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');
const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' ? [] : tsFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** Every import of a file, resolved to a path relative to the repository (aliases included). */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const spec = m[1]!;
    if (spec.startsWith('#shared/')) out.push(`src/shared/${spec.slice('#shared/'.length)}`);
    else if (spec.startsWith('.')) out.push(path.relative(ROOT, path.resolve(path.dirname(file), spec)));
  }
  return out;
}

/** src/<folder> for files in a folder, the file itself for files directly in src/. */
function unitOf(rel: string): string {
  const parts = rel.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : rel.replace(/\.ts$/, '');
}

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of tsFiles(path.join(ROOT, 'src'))) {
    const from = unitOf(path.relative(ROOT, file));
    for (const target of importsOf(file)) {
      const to = unitOf(target);
      if (to === from || !to.startsWith('src/')) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** One cycle of the graph as a path a → … → a, or null when the graph is acyclic. */
function findCycle(graph: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of graph.keys()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found) return found;
  }
  return null;
}

/**
 * The folder graph of another program (the hooks client, the viewer's browser code): a unit is a first-level folder
 * of `base`, or a file directly in it. Only imports that stay inside `base` count.
 */
function programGraph(base: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const unit = (rel: string): string => {
    const parts = path.relative(base, rel).split('/');
    return parts.length > 1 ? parts[0]! : parts[0]!.replace(/\.ts$/, '');
  };
  for (const file of tsFiles(path.join(ROOT, base))) {
    const from = unit(path.relative(ROOT, file));
    for (const target of importsOf(file)) {
      if (!target.startsWith(`${base}/`)) continue;
      const to = unit(target);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/**
 * The layers of docs/architecture.md, top to bottom. A folder may import its own layer (the graph stays
 * acyclic, checked below) and the layers under it, never one above. A new folder fails the walk until it is
 * placed here (and on the map in docs/architecture.md).
 */
const LAYERS: [string, string[]][] = [
  ['app', ['src/index', 'src/app']],
  [
    'features',
    [
      'src/ingest',
      'src/recall',
      'src/search',
      'src/mcp',
      'src/viewer',
      'src/admin',
      'src/forget',
      'src/install',
      'src/retention',
      'src/transfer',
      'src/usage',
      'src/health',
      'src/maintenance',
      'src/corrections',
      'src/versions',
      'src/proposals',
      'src/backup',
      'src/upgrade',
      'src/hold',
      'src/consolidation',
      'src/personal',
      'src/handoff',
      'src/digest',
      'src/receipts',
    ],
  ],
  [
    'mechanisms',
    [
      'src/session',
      'src/store',
      'src/observer',
      'src/vectors',
      'src/live',
      'src/feed',
      'src/slots',
      'src/limits',
      'src/gate',
      'src/auth',
      'src/audit',
      'src/jobs',
      'src/evidence',
    ],
  ],
  ['data', ['src/db']],
  ['bottom', ['src/lib', 'src/shared', 'src/config', 'src/env']],
];
const layerOf = (unit: string): number => LAYERS.findIndex(([, units]) => units.includes(unit));

/** Imports that point up a layer, as "from → to (layer → layer)". */
function upward(graph: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (layerOf(to) < layerOf(from))
        out.push(`${from} → ${to} (${LAYERS[layerOf(from)]![0]} → ${LAYERS[layerOf(to)]![0]})`);
    }
  }
  return out;
}

describe('the direction of imports', () => {
  it('finds the cycle in a graph that has one, so the next check can fail', () => {
    const graph = new Map([
      ['src/a', new Set(['src/b'])],
      ['src/b', new Set(['src/c'])],
      ['src/c', new Set(['src/a'])],
    ]);
    expect(findCycle(graph)).toEqual(['src/a', 'src/b', 'src/c', 'src/a']);
  });

  it('has no cycle between the folders of src/, so every import points downward', () => {
    expect(findCycle(folderGraph())).toBeNull();
  });

  it('places every folder of src/ in a layer, and no import points up a layer', () => {
    const units = new Set(tsFiles(path.join(ROOT, 'src')).map((f) => unitOf(path.relative(ROOT, f))));
    expect([...units].filter((u) => layerOf(u) < 0)).toEqual([]);
    expect(upward(folderGraph())).toEqual([]);
    // The check can fail: db importing a feature points up.
    expect(upward(new Map([['src/db', new Set(['src/recall'])]]))).toEqual(['src/db → src/recall (data → features)']);
  });

  it('keeps env.ts, lib/ and shared/ at the bottom: they import nothing above them', () => {
    const graph = folderGraph();
    expect([...(graph.get('src/env') ?? [])]).toEqual([]);
    expect([...(graph.get('src/lib') ?? [])].filter((to) => to !== 'src/shared' && to !== 'src/env')).toEqual([]);
    expect([...(graph.get('src/shared') ?? [])]).toEqual([]);
  });

  it('lets nothing but the app import src/index.ts', () => {
    const importers = tsFiles(path.join(ROOT, 'src')).filter((f) => importsOf(f).some((t) => t === 'src/index'));
    expect(importers).toEqual([]);
  });

  it('keeps the shared module free of Worker and Node APIs, since both runtimes load it', () => {
    for (const file of tsFiles(path.join(ROOT, 'src/shared'))) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/from\s+['"](?:node:|cloudflare:)/);
    }
  });

  it("has no cycle between the folders of the hooks client, nor of the viewer's browser code", () => {
    expect(programGraph('hooks-client/src').size).toBeGreaterThan(5);
    expect(findCycle(programGraph('hooks-client/src'))).toBeNull();
    expect(programGraph('viewer/src').size).toBeGreaterThan(3);
    expect(findCycle(programGraph('viewer/src'))).toBeNull();
  });

  it('has the hooks client and the viewer reach Worker code only through #shared/*', () => {
    const deep = [...tsFiles(path.join(ROOT, 'hooks-client')), ...tsFiles(path.join(ROOT, 'viewer'))].flatMap((file) =>
      importsOf(file)
        .filter((t) => t.startsWith('src/') && !t.startsWith('src/shared/'))
        .map((t) => `${path.relative(ROOT, file)} → ${t}`),
    );
    expect(deep).toEqual([]);
  });

  it('keeps the Worker bundle lean: zod as a namespace, and the Anthropic SDK without its every-resource client', () => {
    // `import { z }` binds zod's namespace object, which esbuild cannot shake: every locale (~260 KB) ships.
    // The SDK's `Anthropic` class builds every resource (~320 KB); the observer's MessagesClient needs only Messages.
    const heavy = tsFiles(path.join(ROOT, 'src')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const hits = [];
      if (/import\s*\{[^}]*\bz\b[^}]*\}\s*from\s*['"]zod['"]/.test(text)) hits.push('{ z } from zod');
      if (/from\s*['"]@anthropic-ai\/sdk['"]/.test(text)) hits.push('@anthropic-ai/sdk root');
      return hits.map((h) => `${path.relative(ROOT, file)}: ${h}`);
    });
    expect(heavy).toEqual([]);
  });
});
