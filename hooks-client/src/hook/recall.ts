// Hooks that bring memory into the session: the context index at start, a file's history before a Read.
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { call } from '../net/http';
import { captureHeard, noteServerMode } from '../status/capture';
import { isSensitivePath } from '../privacy/sensitive-files';
import { readGitView } from '../project/git-head';
import type { GitView } from '#shared/git';
import { pathInsideRoot } from '#shared/paths';
import { replay } from '../spool/deliver';
import { readState, updateState } from '../state';
import { cutToFit, inject, MAX_CONTEXT_CHARS, type HookContext } from './context';
import type { HookOutput } from '../hook-events';
import { bumpSessionFact } from '../status/local';
import { contextWithReport } from './checkout';
import { checkoutOf, readFileIds, relativePath } from './evidence';
import { ensurePrivateDir, safeWriteFile } from '../util/safe-write';
import { noteLastSession, takePendingHandoff } from '../handoff/state';
import { keptNativeFacts, leaveOutKnown } from '../native-memory/keep';

/** Files smaller than this are cheaper to read than any note about them. */
export const FILE_CONTEXT_MIN_BYTES = 1_500;
const DAY_MS = 86_400_000;

async function getText(ctx: HookContext, path: string, timeoutMs: number): Promise<string> {
  const { url, token, device } = ctx.delivery;
  if (!url || !token) return '';
  try {
    const r = await call(url, path, { token, device, timeoutMs, maxBytes: 200_000 });
    return r.status === 200 ? r.text : '';
  } catch {
    return '';
  }
}

/** GET /api/context: the index, and the capture mode sent with it kept for the checkout (issue 38). */
async function getIndex(ctx: HookContext, path: string, timeoutMs: number): Promise<string> {
  const { url, token, device } = ctx.delivery;
  if (!url || !token) return '';
  try {
    const r = await call(url, path, { token, device, timeoutMs, maxBytes: 200_000 });
    if (r.status !== 200) return '';
    noteServerMode(ctx.paths.stateDir, ctx.projectRoot, captureHeard(r.headers), ctx.io.now());
    return r.text;
  } catch {
    return '';
  }
}

/** The machine's IANA time zone, so the server renders times the way the developer reads them. */
export function localTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Of the injection budget, what the "this session so far" block may take after a compaction; the index gets the rest. */
export const SO_FAR_MAX_CHARS = 4_000;

const soFarFile = (stateDir: string, sessionId: string) =>
  join(stateDir, 'sessions', `${sessionId.replace(/[^\w.-]/g, '_').slice(0, 200)}.so-far.txt`);

function soFarPath(ctx: HookContext): string {
  const q = new URLSearchParams({
    session: ctx.input.sessionId ?? '',
    format: 'text',
    max_chars: String(SO_FAR_MAX_CHARS),
    tz: localTimeZone(),
  });
  return `/api/context/session?${q.toString()}`;
}

/**
 * The index: with evidence on in a git checkout, POST /api/context with the checkout report (hook/checkout.ts);
 * otherwise, or from a server without that route, GET /api/context as before.
 */
async function indexText(ctx: HookContext, git: GitView | null, timeoutMs: number): Promise<string> {
  const repo = ctx.config.evidence && git ? checkoutOf(ctx.projectRoot, ctx.io.env) : null;
  const session = receiptSession(ctx.input.sessionId);
  const until = ctx.io.now() + timeoutMs;
  const reported = repo ? await contextWithReport(ctx, repo, git, timeoutMs, session) : null;
  return reported ?? getIndex(ctx, contextPath(ctx.project, git, session), until - ctx.io.now());
}

/**
 * The session id an injection names, so the server files its receipts under it (which memories went into the
 * session: `cairn why`, the status line); null for one the server would refuse (it would refuse the context too).
 */
export function receiptSession(sessionId: string | null): string | null {
  const s = sessionId?.trim() ?? '';
  return s && s.length <= 200 && !/^(manual|import):/.test(s) ? s : null;
}

/** GET /api/context with the checkout's git view (docs/contracts.md: branch, head, trunk, history). */
export function contextPath(project: string, git: GitView | null, session: string | null = null): string {
  const q = new URLSearchParams({ project, tz: localTimeZone() });
  if (session) q.set('session', session);
  if (git?.branch) q.set('branch', git.branch);
  if (git?.head) q.set('head', git.head);
  if (git?.trunk) q.set('trunk', git.trunk);
  if (git?.history.length) q.set('history', git.history.join(','));
  return `/api/context?${q.toString()}`;
}

/** Of the injection budget, what a handoff (`cairn continue`) may take; the index gets the rest. */
export const HANDOFF_MAX_CHARS = 3_500;

/** GET /api/handoff of a session (or of your latest one in a project: `--last`) as the block, with this checkout's git view. */
export function handoffPath(which: string | { last: string }, git: GitView | null): string {
  const q = new URLSearchParams({
    ...(typeof which === 'string' ? { session: which } : { last: '1', project: which.last }),
    format: 'text',
    tz: localTimeZone(),
    max_chars: String(HANDOFF_MAX_CHARS),
  });
  if (git?.branch) q.set('branch', git.branch);
  if (git?.head) q.set('head', git.head);
  if (git?.history.length) q.set('history', git.history.join(','));
  return `/api/handoff?${q.toString()}`;
}

export async function sessionStart(ctx: HookContext): Promise<HookOutput | null> {
  const now = ctx.io.now();
  const compacted = ctx.input.source === 'compact' && ctx.input.sessionId !== null;
  // Branch, HEAD and recent history rank the index (records of branches that never merged come last, marked).
  const git = await readGitView(
    ctx.projectRoot,
    Math.min(1_000, Math.max(0, ctx.deadline - now - 1_500)),
    ctx.io.env,
  ).catch(() => null);
  const timeout = Math.min(2_500, ctx.deadline - ctx.io.now());
  // `cairn continue` in this checkout: this session (once) starts with that session's handoff, read again now so
  // it says whether this checkout is where that session was.
  const pending = compacted ? null : takePendingHandoff(ctx.paths.stateDir, ctx.projectRoot, now);
  if (ctx.input.sessionId && !compacted)
    noteLastSession(ctx.paths.stateDir, ctx.projectRoot, {
      session: ctx.input.sessionId,
      project: ctx.project,
      at: now,
    });
  const [soFarFresh, context, handoffFresh] = await Promise.all([
    compacted ? getText(ctx, soFarPath(ctx), timeout) : Promise.resolve(''),
    indexText(ctx, git, timeout),
    pending ? getText(ctx, handoffPath(pending.session, git), timeout) : Promise.resolve(''),
  ]);
  // The server may be unreachable right after a compaction: PreCompact kept the block it was given.
  const soFar = compacted ? soFarFresh || readText(soFarFile(ctx.paths.stateDir, ctx.input.sessionId!)) : '';
  const handoff = pending ? (handoffFresh.trim() || pending.text).slice(0, HANDOFF_MAX_CHARS) : '';
  // A new session is a good moment to empty the spool, in whatever time is left.
  if (ctx.delivery.spool.hasPending()) await replay(ctx.delivery, ctx.deadline);
  const warning = spoolWarning(ctx);
  // One budget for all of it: the block first (it is this session's thread), the index in what is left.
  const head = [warning, soFar.slice(0, SO_FAR_MAX_CHARS), handoff].filter(Boolean).join('\n\n');
  const index = cutToFit(withoutNative(ctx, context.trim()), MAX_CONTEXT_CHARS - head.length - 2);
  if (soFar || handoff || context.trim()) bumpSessionFact(ctx.paths.stateDir, ctx.input.sessionId, 'recalled');
  return inject('SessionStart', joinFrames([head, index].filter(Boolean).join('\n\n')));
}

/**
 * The index without what Claude Code's own auto memory already gives the agent, where the person chose to keep both
 * (`cairn install --native-memory keep`, native-memory/keep.ts). Only in Claude Code: another agent is not given
 * Claude Code's memory, so cairn's rows stay.
 */
function withoutNative(ctx: HookContext, index: string): string {
  if (ctx.platform !== 'claude-code') return index;
  return leaveOutKnown(index, keptNativeFacts(ctx.paths.stateDir, ctx.projectRoot)).text;
}

/**
 * Before Claude Code compacts the conversation: what this machine still holds goes to the server (the inbox
 * was drained into the spool by runHook), and the block as the server has it now is kept for SessionStart.
 */
export async function preCompact(ctx: HookContext): Promise<null> {
  if (ctx.delivery.spool.hasPending()) await replay(ctx.delivery, ctx.io.now() + (ctx.deadline - ctx.io.now()) / 2);
  const sessionId = ctx.input.sessionId;
  if (!sessionId) return null;
  const text = await getText(ctx, soFarPath(ctx), ctx.deadline - ctx.io.now());
  if (text) writeText(soFarFile(ctx.paths.stateDir, sessionId), text);
  return null;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function writeText(path: string, text: string): void {
  try {
    ensurePrivateDir(dirname(path));
    safeWriteFile(path, text);
  } catch {
    // SessionStart asks the server itself
  }
}

/** Said once (and again only if more events were lost, or a day later): the offline spool is near its bound. */
function spoolWarning(ctx: HookContext): string {
  const stats = ctx.delivery.spool.stats();
  const state = readState(ctx.paths.stateDir);
  const now = ctx.io.now();
  const newDrops = stats.dropped > (state.spoolWarnedDropped ?? 0);
  const nearFull = stats.fill >= 0.8 && now - (state.spoolWarnedAt ?? 0) > DAY_MS;
  if (!newDrops && !nearFull) return '';
  updateState(ctx.paths.stateDir, { spoolWarnedAt: now, spoolWarnedDropped: stats.dropped });
  const pct = Math.round(stats.fill * 100);
  const lost = stats.dropped ? ` ${stats.dropped} events were dropped because it was full.` : '';
  return `cairn notice: ${stats.pendingEvents} events recorded while the memory server was unreachable are waiting in the local spool (${pct}% of its limit).${lost} The user can run \`cairn status\` and \`cairn flush\`.`;
}

export async function preToolUse(ctx: HookContext): Promise<HookOutput | null> {
  const { input } = ctx;
  if (input.agentId || input.toolName !== 'Read' || !input.toolInput || typeof input.toolInput !== 'object')
    return null;
  const filePath = (input.toolInput as Record<string, unknown>).file_path;
  if (typeof filePath !== 'string' || !filePath || isSensitivePath(filePath)) return null;
  const windows = /^[A-Za-z]:[\\/]/.test(filePath) || filePath.startsWith('\\\\');
  const abs = windows || isAbsolute(filePath) ? filePath : join(input.cwd, filePath);
  let mtimeMs: number;
  try {
    const st = statSync(abs);
    if (!st.isFile() || st.size < FILE_CONTEXT_MIN_BYTES) return null;
    mtimeMs = Math.floor(st.mtimeMs);
  } catch {
    return null;
  }
  const absSlash = abs.replace(/\\/g, '/');
  // Relative to the project root, not cwd: the same file then has the same name on every machine.
  const rel = pathInsideRoot(ctx.projectRoot, abs);
  const q = new URLSearchParams({ project: ctx.project, path: absSlash });
  if (rel) q.append('path', rel);
  q.set('mtime', String(mtimeMs));
  // The file's ids as it is now: its notes are judged against them (a server that predates them uses the mtime).
  const repo = ctx.config.evidence ? checkoutOf(ctx.projectRoot, ctx.io.env) : null;
  const evRel = repo ? relativePath(repo.root, input.cwd, filePath) : null;
  const ids = repo && evRel ? readFileIds(repo, evRel) : undefined;
  if (ids) {
    q.set('blob', ids.blob);
    if (ids.ws) q.set('ws', ids.ws);
  }
  q.set('tz', localTimeZone());
  const session = receiptSession(input.sessionId);
  if (session) q.set('session', session);
  const text = await getText(ctx, `/api/context/file?${q.toString()}`, ctx.deadline - ctx.io.now());
  if (text.trim()) bumpSessionFact(ctx.paths.stateDir, input.sessionId, 'recalled');
  return inject('PreToolUse', text);
}

/**
 * A handoff and the index are each one `<cairn-context>` frame: side by side, the first one's closing line and the
 * second one's opening line go, so the agent is shown one frame (guardFrame would otherwise neutralise both markers
 * as text inside it). Only a closing line directly followed by an opening line is joined.
 */
export function joinFrames(text: string): string {
  return text.replace(/\n<\/cairn-context>\n\n<cairn-context>\n/g, '\n');
}
