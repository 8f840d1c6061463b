// "Keep both" (issue 36): per checkout (its git top level), the normalised facts Claude Code's auto memory held
// when the person chose to keep it beside cairn (`cairn install --native-memory keep`), so SessionStart leaves out
// of cairn's index the rows whose text the native memory already gives the agent: nothing injected twice. One small
// JSON file in the state dir, bounded in checkouts and facts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';
import { FACT_MAX, FACT_MIN_WORDS, normalizeFact } from './format';

const MAX_CHECKOUTS = 200;
/** Facts kept a checkout at most (200 memories of a few lines each). */
export const KEPT_FACTS_MAX = 2_000;
const file = (stateDir: string) => join(stateDir, 'native-memory.json');

interface KeptCheckout {
  facts: string[];
  at: number;
}

function readAll(stateDir: string): Record<string, KeptCheckout> {
  try {
    const v = JSON.parse(readFileSync(file(stateDir), 'utf8')) as unknown;
    if (!v || typeof v !== 'object') return {};
    const out: Record<string, KeptCheckout> = {};
    for (const [root, c] of Object.entries(v as Record<string, unknown>)) {
      const e = c as { facts?: unknown; at?: unknown } | null;
      if (!e || !Array.isArray(e.facts)) continue;
      const facts = e.facts.filter((f): f is string => typeof f === 'string').slice(0, KEPT_FACTS_MAX);
      out[root] = { facts, at: typeof e.at === 'number' ? e.at : 0 };
    }
    return out;
  } catch {
    return {};
  }
}

/** Keeps `facts` (normalised already) for the checkout at `root`, replacing what was kept before. */
export function keepNativeFacts(stateDir: string, root: string, facts: readonly string[], now: number): void {
  const all = readAll(stateDir);
  all[root] = { facts: facts.slice(0, KEPT_FACTS_MAX).map((f) => f.slice(0, FACT_MAX)), at: now };
  const kept = Object.entries(all)
    .sort((a, b) => b[1].at - a[1].at)
    .slice(0, MAX_CHECKOUTS);
  ensurePrivateDir(stateDir);
  safeWriteFile(file(stateDir), JSON.stringify(Object.fromEntries(kept)));
}

/** Forgets the checkout's facts (`--native-memory import|leave` after a `keep`). */
export function dropNativeFacts(stateDir: string, root: string): void {
  const all = readAll(stateDir);
  if (!Object.hasOwn(all, root)) return;
  delete all[root];
  ensurePrivateDir(stateDir);
  safeWriteFile(file(stateDir), JSON.stringify(all));
}

export function keptNativeFacts(stateDir: string, root: string): string[] {
  return readAll(stateDir)[root]?.facts ?? [];
}

/**
 * A row of cairn's index (`12 …` an observation or a personal note, `**12** …` a full one, `S12 …` a session); not a
 * heading, a body line or the frame. Read by hand: it runs on every line of every index.
 */
function isRow(line: string): boolean {
  let i = line.startsWith('**') ? 2 : line.startsWith('S') ? 1 : 0;
  const from = i;
  while (i < line.length && i - from < 15 && line.charCodeAt(i) >= 48 && line.charCodeAt(i) <= 57) i++;
  if (i === from) return false;
  if (from === 2) {
    if (!line.startsWith('**', i)) return false;
    i += 2;
  }
  return line[i] === ' ';
}

/**
 * The index without the rows whose text is already a fact of `facts`, word for word after normalising: a fact found
 * whole inside the row, or the row's own text (its id and clock left out) whole inside a fact, between word
 * boundaries. A full row's indented body goes with it. Bounded: the index's rows times the facts that start with one
 * of a row's words (looked up by first word), and one search of the joined facts a row.
 */
export function leaveOutKnown(index: string, facts: readonly string[]): { text: string; left: number } {
  if (!facts.length || !index) return { text: index, left: 0 };
  const byFirst = new Map<string, string[]>();
  for (const f of facts) {
    const first = f.split(' ', 1)[0]!;
    if (!first) continue;
    const list = byFirst.get(first);
    if (list) list.push(f);
    else byFirst.set(first, [f]);
  }
  // Every fact on one line, for the other direction: a row whose own text (its id and clock left out) is inside one.
  const all = ` ${facts.join(' \n ')} `;
  const out: string[] = [];
  let left = 0;
  let dropBody = false;
  for (const line of index.split('\n')) {
    if (dropBody && line.startsWith(' ')) continue;
    dropBody = false;
    if (isRow(line) && known(normalizeFact(line), byFirst, all)) {
      left++;
      dropBody = line.startsWith('**');
      continue;
    }
    out.push(line);
  }
  return { text: out.join('\n'), left };
}

function known(row: string, byFirst: ReadonlyMap<string, string[]>, all: string): boolean {
  if (holdsFact(row, byFirst)) return true;
  const rest = row.replace(/^s?\d+ (?:\d{1,2} \d{2} )?/, '');
  return rest.split(' ').length >= FACT_MIN_WORDS && all.includes(` ${rest} `);
}

function holdsFact(row: string, byFirst: ReadonlyMap<string, string[]>): boolean {
  const words = row.split(' ');
  let at = 0;
  for (const w of words) {
    for (const f of byFirst.get(w) ?? []) {
      if (!row.startsWith(f, at)) continue;
      const end = at + f.length;
      if (end === row.length || row[end] === ' ') return true;
    }
    at += w.length + 1;
  }
  return false;
}
