// `cairn promote 12 40 [--to AGENTS.md|CLAUDE.md]`: a lesson the team keeps relearning becomes one of the
// repository's own rules, where the team reviews rules. The records are read through the read routes (the
// visibility rule), written as one-line rules into cairn's block of the instruction file (src/promote/block.ts) as a
// patch in cairn's state folder: never a commit, a push or a write to the work tree; the person reads it and applies
// it (`git apply`). Then the server marks them promoted: out of the context index (the file carries them now),
// still searchable. The checkout is read only through src/repo/ (no link followed, no git run).
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { withRules, type RuleRecord } from '../promote/block';
import { unifiedDiff } from '../promote/patch';
import { readInstructionFile } from '../repo/instruction-file';
import { isRefusal, locateRepo } from '../repo/locate';
import { ownershipRefusal } from '../repo/trust';
import { ensurePrivateDir, safeUnlink, safeWriteFile } from '../util/safe-write';
import { computeProjectKey } from '../project/project-key';
import { observationId } from './supersede';

const USAGE = `usage: cairn promote <12> [<40>…] [--to AGENTS.md|CLAUDE.md]
       writes a patch that adds the records as rules to the repository's instruction file (default: the one
       there, else AGENTS.md), inside cairn's block; apply it yourself (git apply). The records leave the
       context index (the file carries them) and stay searchable. Their author or a team admin may.
       cairn promote --candidates [--project <key>]
       this project's records used most and marked useful, never contradicted, that you may promote
`;
/** As the server takes at once (src/corrections/promote.ts PROMOTE_MAX). */
const MAX_IDS = 20;
const FILES = ['AGENTS.md', 'CLAUDE.md'] as const;
type FileName = (typeof FILES)[number];

type Api = { url: string; token: string; device: string | null };

async function request(api: Api, path: string, body?: unknown) {
  return call(api.url, path, { token: api.token, device: api.device, body, timeoutMs: 30_000 });
}

/** The file to write to: the one asked for, else the one the repository has (AGENTS.md first), else AGENTS.md. */
function targetOf(to: unknown, has: (f: FileName) => boolean): FileName | null {
  if (to === undefined) return FILES.find(has) ?? 'AGENTS.md';
  return FILES.find((f) => f === to) ?? null;
}

export async function promote(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: { to: { type: 'string' }, candidates: { type: 'boolean' }, project: { type: 'string' } },
  });
  if (values.candidates) {
    if (positionals.length || values.to !== undefined) {
      io.err(USAGE);
      return 2;
    }
    return listCandidates(io, typeof values.project === 'string' ? values.project : computeProjectKey(io.cwd).key);
  }
  const ids = positionals.map(observationId);
  const to = values.to;
  if (
    !ids.length ||
    ids.length > MAX_IDS ||
    ids.some((id) => id === null) ||
    (to !== undefined && typeof to !== 'string')
  ) {
    io.err(USAGE);
    return 2;
  }
  const wanted = [...new Set(ids as number[])];

  const repo = locateRepo(io.cwd);
  if (repo === null) return fail(io, `${io.cwd} is not in a git repository; run cairn promote inside the checkout.`);
  if (isRefusal(repo)) return fail(io, `${repo.root} is not read: ${repo.refused}.`);
  const notOurs = ownershipRefusal(repo, io.env);
  if (notOurs) return fail(io, notOurs);
  const file = targetOf(to, (f) => {
    const r = readInstructionFile(repo, f);
    return 'refused' in r || r.text !== null;
  });
  if (!file) {
    io.err(USAGE);
    return 2;
  }
  const current = readInstructionFile(repo, file);
  if ('refused' in current) return fail(io, `${current.refused}. Nothing written.`);

  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  const api: Api = { url: config.url, token: config.token, device: config.device };
  try {
    const got = await request(api, `/api/observations?ids=${wanted.join(',')}`);
    if (got.status !== 200) return fail(io, errorText(got));
    const records = (JSON.parse(got.text) as { observations: RuleRecord[] }).observations;
    const missing = wanted.filter((id) => !records.some((r) => r.id === id));
    if (missing.length)
      return fail(io, `no record ${missing.map((id) => `#${id}`).join(', ')} you may read; nothing written.`);
    const next = withRules(current.text, records);
    if ('refused' in next) return fail(io, `${file} is not changed: ${next.refused}.`);
    const patch = unifiedDiff(file, current.text, next.text);

    // The patch first: a promote the server refuses takes it away again, and a promoted record always has one.
    const paths = pathsFor(io.env);
    const dir = join(paths.stateDir, 'promote');
    const name = basename(repo.root)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 60);
    const out = join(dir, `${name}-${wanted.join('-')}-${io.now()}.patch`);
    if (patch) {
      ensurePrivateDir(paths.stateDir);
      safeWriteFile(out, patch, { root: paths.stateDir });
    }
    const marked = await request(api, '/api/corrections/promote', { ids: wanted, to: file });
    if (marked.status !== 200) {
      if (patch) safeUnlink(out, { root: paths.stateDir });
      return fail(io, `${errorText(marked)}`);
    }
    const names = wanted.map((id) => `#${id}`).join(', ');
    if (!patch) {
      io.out(`cairn: ${file} already holds ${names} as rules; nothing to change. They are marked promoted.\n`);
      return 0;
    }
    io.out(
      `cairn: ${names} promoted: they leave the team's context index and stay searchable.\n` +
        `The change to ${file} (${next.rules} rules in cairn's block) is a patch for you to read and apply:\n` +
        `  ${out}\n` +
        `  git -C ${shellWord(repo.root)} apply ${shellWord(out)}\n`,
    );
    return 0;
  } catch (e) {
    return fail(io, `server not reachable (${e instanceof Unreachable ? e.reason : String(e)})`);
  }
}

interface Candidate {
  id: number;
  title: string | null;
  author: string;
  useful: number;
  fetched: number;
}

/** The server's candidates for this project, one line each (printed through the terminal filter, run.ts). */
async function listCandidates(io: Io, project: string): Promise<number> {
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  try {
    const r = await request(
      { url: config.url, token: config.token, device: config.device },
      `/api/corrections/promote/candidates?project=${encodeURIComponent(project)}`,
    );
    if (r.status !== 200) return fail(io, errorText(r));
    const list = (JSON.parse(r.text) as { candidates: Candidate[] }).candidates;
    if (!list.length) {
      io.out(
        `cairn: nothing in ${project} to promote yet (no record of yours used or marked useful and never flagged).\n`,
      );
      return 0;
    }
    io.out(`Candidates in ${project} (used most, marked useful, never contradicted):\n`);
    for (const c of list)
      io.out(
        `  #${c.id}  useful ${c.useful} · used ${c.fetched}  ${(c.title ?? '(untitled)').slice(0, 200)}  (@${c.author})\n`,
      );
    io.out('Promote with: cairn promote <id> [<id>…] [--to AGENTS.md|CLAUDE.md]\n');
    return 0;
  } catch (e) {
    return fail(io, `server not reachable (${e instanceof Unreachable ? e.reason : String(e)})`);
  }
}

/** `s` as one word a POSIX shell reads back as `s`: as it is when plain, else single-quoted. */
const shellWord = (s: string) => (/^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function fail(io: Io, message: string): number {
  io.err(`cairn promote: ${message}\n`);
  return 1;
}
