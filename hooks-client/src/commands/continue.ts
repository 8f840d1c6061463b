// Continue anywhere (issue 36). `cairn continue [SESSION | --last]`: the next session of the agent in this checkout
// (its next SessionStart, once) starts with the handoff of that session: yours from another machine, or a teammate's
// of a team project (GET /api/handoff). `cairn handoff "note"` (what `/cairn:handoff` runs): a note for whoever
// continues a session of yours, written into it (POST /api/handoff/note).
import { parseArgs } from 'node:util';
import { redact } from '#shared/redact';
import { stripMemoryTags } from '#shared/tags';
import { loadConfig, loggedInConfig, pathsFor } from '../config';
import { drainInbox } from '../hook/drain';
import { handoffPath } from '../hook/recall';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { readGitHead, readGitView } from '../project/git-head';
import { projectFor } from '../project/project-key';
import { replay } from '../spool/deliver';
import { lastSession, setPendingHandoff } from '../handoff/state';
import { deliveryFor } from './account';

const CONTINUE_USAGE = `usage: cairn continue <session id> | --last
       the next session of your agent in this checkout starts where that session stopped (once):
       --last is your own latest session in this project, on any device; a session id may be a teammate's
`;
const HANDOFF_USAGE = `usage: cairn handoff [--session ID] "what the next session needs to know"
       a note for whoever continues the session (default: the latest one started in this checkout)
`;

interface HandoffAnswer {
  session: string;
  project: string;
  author: string;
  device: string | null;
  platform: string;
  counts: { prompts: number; observations: number; todos: number; notes: number; summary: boolean };
  text: string;
}

const unreachable = (io: Io, e: unknown) => {
  io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
  return 1;
};

export async function continueSession(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { last: { type: 'boolean' } } });
  const session = positionals[0]?.trim();
  if (positionals.length > 1 || !!session === !!values.last) {
    io.err(CONTINUE_USAGE);
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  const here = projectFor(io.cwd, paths.stateDir, io.now());
  const git = await readGitView(here.root, 1_000, io.env).catch(() => null);
  // The JSON form of the same block the next SessionStart asks for, so what is promised here is what it gets (with
  // this checkout's branch and commit, for --last too: it says whether this checkout is where the session was).
  const path = handoffPath(session ?? { last: here.key }, git).replace('format=text', 'format=json');
  let h: HandoffAnswer;
  try {
    const r = await call(config.url, path, { token: config.token, device: config.device, timeoutMs: 20_000 });
    if (r.status !== 200) {
      io.err(`cairn: ${errorText(r)}\n`);
      return 1;
    }
    h = JSON.parse(r.text) as HandoffAnswer;
  } catch (e) {
    return unreachable(io, e);
  }
  if (!h.text) {
    io.err(`cairn: session ${h.session} has nothing stored yet that you may read.\n`);
    return 1;
  }
  setPendingHandoff(paths.stateDir, here.root, { session: h.session, project: h.project, text: h.text, at: io.now() });
  const c = h.counts;
  const what = [
    `${c.prompts} prompt${c.prompts === 1 ? '' : 's'}`,
    `${c.observations} observation${c.observations === 1 ? '' : 's'}`,
    c.summary ? 'its latest summary' : null,
    `${c.todos} open todo${c.todos === 1 ? '' : 's'}`,
    c.notes ? `${c.notes} handoff note${c.notes === 1 ? '' : 's'}` : null,
  ].filter(Boolean);
  const by = `@${h.author}${h.device ? `/${h.device}` : ''}${h.platform !== 'claude-code' ? `, ${h.platform}` : ''}`;
  io.out(`cairn: the next agent session in ${here.root} starts where session ${h.session} (${by}) stopped.\n`);
  io.out(`cairn: it gets ${what.join(', ')}.\n`);
  const where = h.text.split('\n').find((l) => l.startsWith('This checkout:'));
  if (where) io.out(`cairn: ${where}\n`);
  return 0;
}

export async function handoffNote(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { session: { type: 'string' } },
  });
  const text = redact(stripMemoryTags(positionals.join(' '))).trim();
  if (!text) {
    io.err(HANDOFF_USAGE);
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  const here = projectFor(io.cwd, paths.stateDir, io.now());
  const session = values.session?.trim() || lastSession(paths.stateDir, here.root)?.session;
  if (!session) {
    io.err('cairn: no agent session has started in this checkout on this machine; name one with --session ID.\n');
    return 2;
  }
  // The session's events this machine still holds first: the note goes into a session the server knows.
  const delivery = deliveryFor(io, loadConfig(io.env, paths), paths);
  await drainInbox(paths.stateDir, io.env, io.now() + 10_000, 2_000).catch(() => undefined);
  if (delivery.spool.hasPending()) await replay(delivery, io.now() + 15_000, 2_000).catch(() => undefined);
  let head = null;
  try {
    head = readGitHead(here.root);
  } catch {
    // outside a repository: the note says nothing about git
  }
  const body = {
    session_id: session,
    text,
    ...(head?.branch ? { git_branch: head.branch } : {}),
    ...(head?.commit ? { git_commit: head.commit } : {}),
  };
  try {
    const r = await call(config.url, '/api/handoff/note', {
      token: config.token,
      device: config.device,
      body,
      timeoutMs: 20_000,
    });
    if (r.status !== 200 && r.status !== 201) {
      io.err(`cairn: ${errorText(r)}\n`);
      return 1;
    }
    const saved = JSON.parse(r.text) as { id: number; duplicate: boolean };
    io.out(
      `cairn: handoff note #${saved.id} ${saved.duplicate ? 'was already' : 'is'} in session ${session}; ` +
        `\`cairn continue ${session}\` on another machine (or --last, for your own) picks it up.\n`,
    );
    return 0;
  } catch (e) {
    return unreachable(io, e);
  }
}
