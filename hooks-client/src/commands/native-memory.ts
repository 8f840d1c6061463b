// `cairn install --native-memory keep|import|leave` (issue 36, "Beside the agent's own memory"): Claude Code's auto
// memory for this checkout (native-memory/read.ts), said what was found, then one of: keep both (cairn leaves out of
// its SessionStart index what the native memory already holds: native-memory/keep.ts), import it into cairn (each
// memory one note through POST /api/memory/remember, which files a repeat as the same note: importing twice stores
// once) and say how to turn the native one off, or leave it alone. Asked when a person is at a terminal; otherwise
// `leave`, with a line saying what was found.
import { redact } from '#shared/redact';
import { stripMemoryTags } from '#shared/tags';
import { loggedInConfig, type Paths } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { projectFor } from '../project/project-key';
import { factLines, type NativeFact } from '../native-memory/format';
import { dropNativeFacts, keepNativeFacts } from '../native-memory/keep';
import { readNativeMemory } from '../native-memory/read';

export const NATIVE_CHOICES = ['keep', 'import', 'leave'] as const;
export type NativeChoice = (typeof NATIVE_CHOICES)[number];

export const parseNativeChoice = (v: string | undefined): NativeChoice | null =>
  (NATIVE_CHOICES as readonly string[]).includes(v ?? '') ? (v as NativeChoice) : null;

/** Claude Code's documented switch (its settings schema: "When false, Claude will not read from or write to the auto-memory directory"). */
const TURN_OFF =
  'cairn: to turn Claude Code\'s auto memory off for this project, add "autoMemoryEnabled": false to .claude/settings.local.json here (or to ~/.claude/settings.json for every project), or run /memory in Claude Code and switch it off.\n';

/** Text as it may leave the machine: memory tags stripped, secrets redacted (the server does both again). */
const outgoing = (text: string): string => redact(stripMemoryTags(text)).trim();

/** A note about the person (Claude Code's `user` and `feedback` memories) is theirs; the rest is the project's. */
const scopeOf = (f: NativeFact): 'personal' | 'project' =>
  f.type === 'user' || f.type === 'feedback' ? 'personal' : 'project';

/** The person's answer at a terminal; `leave` for anything else. */
async function ask(found: number): Promise<NativeChoice> {
  const readline = process.getBuiltinModule('node:readline/promises');
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const a = await rl.question(
      `cairn: Claude Code's auto memory holds ${found} memories for this project. Keep both (cairn leaves out what it already holds), import them into cairn, or leave it alone? [keep/import/leave] (leave) `,
    );
    return parseNativeChoice(a.trim().toLowerCase()) ?? 'leave';
  } finally {
    rl.close();
  }
}

/** The install step; 0, or 1 when an import could not finish (what was sent stays: a second run sends the rest). */
export async function nativeMemoryStep(io: Io, paths: Paths, chosen: NativeChoice | null): Promise<number> {
  const { root, key } = projectFor(io.cwd, paths.stateDir, io.now());
  const found = readNativeMemory(io.env, paths.home, root);
  for (const name of found?.refused ?? [])
    io.err(`cairn: ${name} in Claude Code's memory folder is not a regular file (a link?): not read\n`);
  if (!found || !found.facts.length) {
    if (chosen && chosen !== 'leave') io.out('cairn: no Claude Code auto memory for this project; nothing to do\n');
    return 0;
  }
  const n = found.facts.length;
  const interactive = io.isTty && Boolean(process.stdin.isTTY);
  const choice = chosen ?? (interactive ? await ask(n) : null);
  if (!choice) {
    io.out(
      `cairn: found Claude Code's auto memory for this project (${n} memories in ${found.dir}); left alone. Run cairn install --native-memory keep or import to use it with cairn.\n`,
    );
    return 0;
  }
  if (choice === 'leave') {
    dropNativeFacts(paths.stateDir, root);
    io.out(`cairn: left Claude Code's auto memory alone (${n} memories in ${found.dir})\n`);
    return 0;
  }
  if (choice === 'keep') {
    const facts = factLines(found.facts);
    keepNativeFacts(paths.stateDir, root, facts, io.now());
    io.out(
      `cairn: keeping both: ${n} memories of Claude Code's auto memory (${facts.length} lines) stay there, and cairn leaves what they say out of its session index here. Run this again after Claude Code's memory changes.\n`,
    );
    return 0;
  }
  dropNativeFacts(paths.stateDir, root);
  const code = await importFacts(io, paths, key, found.facts);
  if (code === 0) io.out(TURN_OFF);
  return code;
}

async function importFacts(io: Io, paths: Paths, project: string, facts: readonly NativeFact[]): Promise<number> {
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  let added = 0;
  let already = 0;
  for (const f of facts) {
    const text = outgoing(f.text).slice(0, 8_000);
    if (!text) continue;
    const scope = scopeOf(f);
    const title = outgoing(f.title).replace(/\s+/g, ' ').slice(0, 200);
    const body = { scope, text, ...(title ? { title } : {}), ...(scope === 'project' ? { project } : {}) };
    try {
      const r = await call(config.url, '/api/memory/remember', {
        token: config.token,
        device: config.device,
        body,
        timeoutMs: 30_000,
      });
      if (r.status !== 200 && r.status !== 201) {
        io.err(`cairn: importing ${f.file} failed: ${errorText(r)}\n`);
        return 1;
      }
      if ((JSON.parse(r.text) as { duplicate?: boolean }).duplicate) already++;
      else added++;
    } catch (e) {
      io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
      return 1;
    }
  }
  io.out(
    `cairn: imported Claude Code's auto memory: ${added} new notes, ${already} already there (personal: user and feedback memories; the rest into ${project})\n`,
  );
  return 0;
}
