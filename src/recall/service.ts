// Recall operations shared by the HTTP routes and the MCP tools: resolve scope, query, render.
import type { AuthContext } from '../auth/types';
import { resolveVisibleProjects } from '../db/projects';
import { settingsFor, type TeamSettings } from '../db/team-settings';
import { viewerOf, type Viewer } from '../db/visibility';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { budgetNotice, hasBudget } from '../observer/budget';
import { teamBudget } from '../observer/spend';
import { teamStub } from '../slots/team-do';
import { searchObservations } from '../search/search';
import { changedSince, pathCandidates, renderFileContext, scoreFileHistory } from './file-context';
import { modeIdFor, recallMode, type RecallMode } from './mode';
import type { ObservationRecord } from '#shared/wire/records';
import { contextObservations, contextSummaries, fileHistory, observationsByIds } from './records';
import { renderContext } from './render-context';
import { renderPromptContext } from './render-prompt';
import { parseAnchor, type Anchor, type TimelineResult } from './render-timeline';
import { loadTimeline } from './timeline';
import { directoryDb, teamDb } from '../db/shards';
import { personalNotesOf, sessionRecordOf } from '../db/recall';
import { personalProjectKey } from '../db/write-policy';
import { PERSONAL_NOTES_MAX, personalLines } from './render-personal';
import { findVisibleSession } from '../db/sessions';
import { renderSessionSoFar } from './render-session';
import { preferMerged, type BranchedRow } from '../evidence/branches';
import type { GitView } from '#shared/git';
import { contextEvidence, type ContextEvidence } from './context-evidence';
import { checkoutsOf, judgeStored, ownerOf, wireEvidence } from '../evidence/checkout';
import { fileEntry, fileKey } from '#shared/evidence';
import { fadeCutoff, fadeEpochOf, indexCutoff } from '../db/fading';
import type { CheckoutReport } from './params';
import { capturePolicy, type CaptureMode } from '#shared/capture';
import { storedProjectKey } from '../db/write-policy';
import { recordInjection } from '../receipts/record';
import { receiptCounts } from '../db/receipts';
import type { WireReceiptCounts } from '#shared/wire/receipts';

export const DEFAULT_CONTEXT_OBSERVATIONS = 50;
export const DEFAULT_CONTEXT_SESSIONS = 10;
export const MAX_IDS = 100;

interface Scope {
  /** The team's database (its shard). */
  d: D1Database;
  viewer: Viewer;
  settings: TeamSettings;
  mode: RecallMode;
}

async function scopeOf(env: CairnEnv, auth: AuthContext): Promise<Scope> {
  const [settings, d] = await Promise.all([settingsFor(directoryDb(env), auth), teamDb(env, auth.teamId)]);
  // What recall answers goes into an agent's context, so held-back rows of others stay out of it even for an
  // admin's agent: admins review them in the review queue (src/corrections/review.ts), not through their agent.
  const viewer: Viewer = { ...viewerOf(auth, settings), seesHeld: false };
  return { d, viewer, settings, mode: recallMode(modeIdFor(env, settings)) };
}

/**
 * The agent session whose receipts an injection is filed under, or null when the admins' capture policy for the
 * projects is `off`: a team that records nothing of its sessions keeps no list of what went into them either.
 */
function receiptSession(
  settings: TeamSettings,
  auth: AuthContext,
  keys: readonly string[],
  projects: readonly { key: string }[],
  session: string | null | undefined,
): string | null {
  if (!session) return null;
  const mode = capturePolicy(settings, [
    ...keys.map((k) => storedProjectKey(k, auth.handle)),
    ...projects.map((p) => p.key.replace(/#[^#]*$/, '')),
  ]);
  return mode === 'off' ? null : session;
}

/**
 * The mode's types and concepts, narrowed by the team's `observation_types` / `observation_concepts`
 * allow-lists for the context index (ids the mode does not know are ignored; an absent list keeps the mode's).
 */
export function narrowedMode(
  mode: RecallMode,
  settings: Pick<TeamSettings, 'observation_types' | 'observation_concepts'>,
): RecallMode {
  const types = settings.observation_types;
  const concepts = settings.observation_concepts;
  return {
    ...mode,
    types: types ? mode.types.filter((t) => types.includes(t.id)) : mode.types,
    conceptIds: concepts ? mode.conceptIds.filter((c) => concepts.includes(c)) : mode.conceptIds,
  };
}

export interface ContextOptions {
  projects: string[];
  observations?: number;
  sessions?: number;
  full?: number;
  timeZone: string;
  now: number;
  /** The caller's checkout, when its client sent it: rows of branches that never merged here come last, marked. */
  git?: GitView | null;
  /** The checkout report of POST /api/context (src/recall/context-evidence.ts). */
  checkout?: CheckoutReport;
  /** The agent's session the index goes into: its receipts (src/receipts/) and start mark are filed under it. */
  session?: string;
}

/**
 * With a checkout to judge by, twice the rows are read so that unmerged and gone ones can give way (bounded by the
 * route's 500).
 */
const candidates = (limit: number, widen: boolean) => (widen ? Math.min(limit * 2, 1_000) : limit);

/**
 * Rows a summary's branch is judged by: its observations (a session's own commit is its first event's, older than
 * the work it did), and the summaries of branches no observation names.
 */
function summaryTips(observations: readonly BranchedRow[], summaries: readonly BranchedRow[]): BranchedRow[] {
  const seen = new Set(observations.map((o) => o.gitBranch).filter(Boolean));
  return [...observations, ...summaries.filter((s) => !seen.has(s.gitBranch))];
}

export interface ContextAnswer {
  text: string;
  /** Set when the request carried a checkout report. */
  exchange: ContextEvidence['exchange'];
  /**
   * The capture mode of the projects asked (issue 38: the admins' policy for the keys asked and the projects they
   * resolve to, #shared/capture.ts), which the route sends as a header.
   */
  capture: CaptureMode;
}

export async function contextText(env: CairnEnv, auth: AuthContext, o: ContextOptions): Promise<string> {
  return (await contextAnswer(env, auth, o)).text;
}

/**
 * The session-start index: the newest rows of the projects, each observation judged against the caller's checkout
 * (a `gone` one leaves the index, a changed one is marked), rows of branches that never merged here last.
 */
export async function contextAnswer(env: CairnEnv, auth: AuthContext, o: ContextOptions): Promise<ContextAnswer> {
  const { d, viewer, settings, mode } = await scopeOf(env, auth);
  const [projects, epoch] = await Promise.all([resolveVisibleProjects(d, auth, o.projects), fadeEpochOf(d)]);
  const ids = projects.map((p) => p.id);
  // Records none of the team used within fade_after_days leave the index (src/db/fading.ts); search still finds them.
  const fadedBefore = indexCutoff(fadeCutoff(settings, o.now), epoch);
  const obsLimit = o.observations ?? settings.context_observations ?? DEFAULT_CONTEXT_OBSERVATIONS;
  const sumLimit = o.sessions ?? settings.context_sessions ?? DEFAULT_CONTEXT_SESSIONS;
  const widen = !!o.git || !!o.checkout;
  const [observations, summaries, stored, budget, memory, personal] = await Promise.all([
    contextObservations(d, viewer, ids, narrowedMode(mode, settings), candidates(obsLimit, widen), fadedBefore),
    contextSummaries(d, viewer, ids, candidates(sumLimit, !!o.git)),
    // The device's checkouts, beside the candidates rather than after them (one round trip less).
    checkoutsOf(d, ownerOf(auth), ids),
    // Read only for teams that set an observer budget.
    hasBudget(settings) ? teamBudget(d, auth.teamId, o.now, settings) : null,
    // Whether memory is paused, delayed or behind (slots/observer-health.ts); the index is served without it
    // rather than not at all when the team's object cannot answer.
    teamStub(env, auth.teamId)
      .health(o.now)
      .then((h) => h.notice)
      .catch(() => null),
    // The caller's own memory follows them into every project (only theirs: the rule reads their user id).
    personalNotesOf(d, viewer, personalProjectKey(auth.handle), PERSONAL_NOTES_MAX),
  ]);
  const ev = await contextEvidence(d, auth, ids, stored, observations, o.git ?? null, o.checkout, o.now);
  const judged = observations
    .map((r) => ({ ...r, evidence: ev.judged.get(r.id) ?? null }))
    .filter((r) => r.evidence?.value !== 'gone');
  const capture = capturePolicy(settings, [
    ...o.projects.map((k) => storedProjectKey(k, auth.handle)),
    ...projects.map((p) => p.key.replace(/#[^#]*$/, '')),
  ]);
  const shown = preferMerged(judged, o.git ?? null, obsLimit, observations);
  const text = renderContext({
    personal: personalLines(personal),
    projects: projects.length ? projects.map((p) => p.key) : o.projects,
    observations: shown,
    summaries: preferMerged(summaries, o.git ?? null, sumLimit, summaryTips(observations, summaries)),
    mode,
    viewer: auth.handle,
    fullCount: o.full ?? settings.context_full_count ?? 0,
    now: o.now,
    timeZone: o.timeZone,
    notice: [memory, budget ? budgetNotice(budget) : null].filter(Boolean).join(' ') || null,
  });
  await recordInjection(d, auth, {
    sessionKey: capture === 'off' ? null : o.session,
    projectId: projects[0]?.id,
    channel: 'index',
    sent: shown,
    now: o.now,
    start: true,
  });
  return { text, exchange: ev.exchange, capture };
}

export interface FileContextOptions {
  projects: string[];
  paths: string[];
  cwd?: string;
  /** Older clients: notes older than the file's mtime are withheld. */
  mtime?: number;
  /** The file's ids now (newer clients): every note is judged, the file's own entry taken from them. */
  blob?: string;
  ws?: string;
  timeZone: string;
  now: number;
  /** The agent's session the notes go into (their receipts). */
  session?: string;
}

export async function fileContextText(env: CairnEnv, auth: AuthContext, o: FileContextOptions): Promise<string> {
  const { d, viewer, mode, settings } = await scopeOf(env, auth);
  const projects = await resolveVisibleProjects(d, auth, o.projects);
  const candidates = pathCandidates(o.paths, o.cwd);
  const rows = await fileHistory(
    d,
    viewer,
    projects.map((p) => p.id),
    candidates.all,
  );
  if (!rows.length || (!o.blob && changedSince(rows, o.mtime))) return '';
  const rel = candidates.relative[0];
  // The file being read is reported as it is now; the rest of each note's files as the device last reported them.
  const now = o.blob && rel ? { [fileKey(rel)]: fileEntry({ blob: o.blob, ws: o.ws ?? null, missing: null }) } : {};
  const judged = await judgeStored(
    d,
    auth,
    rows.map((r) => r.id),
    () => now,
  );
  const kept = rows
    .map((r) => ({ ...r, evidence: judged.get(r.id) ?? null }))
    .filter((r) => r.evidence?.value !== 'gone');
  const scored = scoreFileHistory(kept, candidates.all);
  const shown = rel ?? candidates.all[0] ?? o.paths[0] ?? '';
  const text = renderFileContext({
    path: shown,
    rows: scored,
    mode,
    viewer: auth.handle,
    now: o.now,
    timeZone: o.timeZone,
  });
  await recordInjection(d, auth, {
    sessionKey: receiptSession(settings, auth, o.projects, projects, o.session),
    projectId: projects[0]?.id,
    channel: 'file',
    sent: text ? scored : [],
    now: o.now,
  });
  return text;
}

export const PROMPT_CONTEXT_LIMIT = 5;
/** Shorter prompts ("ok", "go on") say too little to search on. */
export const PROMPT_MIN_CHARS = 4;

export async function promptContextText(
  env: CairnEnv,
  auth: AuthContext,
  o: { projects: string[]; q: string; timeZone: string; session?: string; now: number },
): Promise<string> {
  const q = o.q.trim();
  if ([...q].length < PROMPT_MIN_CHARS || !o.projects.length) return '';
  const { d, viewer, mode, settings } = await scopeOf(env, auth);
  const found = await searchObservations(env, auth, {
    q: q.slice(0, 1000),
    project: o.projects,
    limit: PROMPT_CONTEXT_LIMIT,
  });
  // Superseded and flagged records rank last in search; the prompt's context leaves them out, and promoted ones
  // (the repository's instruction file carries them).
  const current = found.results.filter((r) => r.supersededBy == null && !r.flagged && !r.promoted);
  const ids = current.map((r) => r.id);
  const [records, evidence] = await Promise.all([observationsByIds(d, viewer, ids), judgeStored(d, auth, ids)]);
  // Notes on code that is gone from the checkout are left out; changed ones are marked.
  const kept = records.filter((r) => evidence.get(r.id)?.value !== 'gone');
  const text = renderPromptContext({ records: kept, evidence, mode, viewer: auth.handle, timeZone: o.timeZone });
  // Its project is read only to file the receipts (search resolved the same keys).
  if (text && o.session) {
    const projects = await resolveVisibleProjects(d, auth, o.projects);
    await recordInjection(d, auth, {
      sessionKey: receiptSession(settings, auth, o.projects, projects, o.session),
      projectId: projects[0]?.id,
      channel: 'prompt',
      sent: kept.map((r) => ({ id: r.id, evidence: evidence.get(r.id) })),
      now: o.now,
    });
  }
  return text;
}

export interface TimelineOptions {
  anchor?: string | number;
  q?: string;
  before: number;
  after: number;
  projects: string[];
}

/** Resolves the anchor (or picks one with search) and loads the items around it. */
export async function timelineFor(
  env: CairnEnv,
  auth: AuthContext,
  o: TimelineOptions,
): Promise<{ result: TimelineResult; mode: RecallMode }> {
  const { d, viewer, mode } = await scopeOf(env, auth);
  let projectIds: number[] | null = null;
  if (o.projects.length) {
    projectIds = (await resolveVisibleProjects(d, auth, o.projects)).map((p) => p.id);
    if (!projectIds.length) throw new AppError(404, 'anchor_not_found', 'No such observation or session summary.');
  }
  let anchor: Anchor | null;
  if (o.anchor !== undefined && o.anchor !== '') {
    anchor = parseAnchor(o.anchor);
    if (!anchor)
      throw new AppError(
        400,
        'invalid_anchor',
        'anchor must be an observation id (123), a summary id (S12) or an ISO date/time.',
      );
  } else if (o.q?.trim()) {
    const found = await searchObservations(env, auth, { q: o.q, project: o.projects, limit: 1 });
    const top = found.results[0];
    if (!top) throw new AppError(404, 'anchor_not_found', 'Nothing matched the query, so there is no anchor.');
    anchor = { kind: 'observation', id: top.id };
  } else {
    throw new AppError(400, 'anchor_required', 'Give an anchor (id, S<id> or ISO time) or a query q to pick one.');
  }
  const result = await loadTimeline(d, viewer, { anchor, before: o.before, after: o.after, projectIds });
  const evidence = await judgeStored(
    d,
    auth,
    result.items.filter((i) => i.kind === 'observation').map((i) => i.id),
  );
  const items = result.items.map((i) => {
    const ev = i.kind === 'observation' ? evidence.get(i.id) : undefined;
    return ev ? { ...i, evidence: ev } : i;
  });
  return { result: { ...result, items }, mode };
}

/** Parses `1,2,3` (or an array) into distinct positive ids; 400 `invalid_ids` for anything else. */
export function parseIds(raw: string | (string | number)[] | undefined): number[] {
  const parts = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : raw.split(',');
  const trimmed = parts.map((s) => s.trim().replace(/^#/, '')).filter(Boolean);
  if (!trimmed.length)
    throw new AppError(400, 'invalid_ids', 'Give ids as a comma-separated list of observation ids, e.g. ids=1,2,3.');
  if (trimmed.length > MAX_IDS) throw new AppError(400, 'invalid_ids', `At most ${MAX_IDS} ids per request.`);
  const out: number[] = [];
  for (const s of trimmed) {
    if (!/^\d{1,15}$/.test(s) || Number(s) <= 0)
      throw new AppError(400, 'invalid_ids', `"${s.slice(0, 20)}" is not an observation id.`);
    if (!out.includes(Number(s))) out.push(Number(s));
  }
  return out;
}

export async function observationRecords(
  env: CairnEnv,
  auth: AuthContext,
  ids: number[],
): Promise<{ records: ObservationRecord[]; mode: RecallMode }> {
  const { d, viewer, mode } = await scopeOf(env, auth);
  const [records, evidence] = await Promise.all([observationsByIds(d, viewer, ids), judgeStored(d, auth, ids)]);
  return { records: records.map((r) => ({ ...r, evidence: wireEvidence(evidence.get(r.id)) })), mode };
}

export const SESSION_SO_FAR_ROWS = 60;

export interface SessionSoFar {
  session: string;
  /** Readable observations stored for the session, and whether a summary exists. */
  observations: number;
  summarized: boolean;
  text: string;
  /** The memories given to the session (its receipts) and how many were stale when sent: the status line's counts. */
  memories: WireReceiptCounts;
}

/** One session's record so far, by its agent-side key; zeros and '' for a session not stored (yet) or not visible. */
export async function sessionSoFar(
  env: CairnEnv,
  auth: AuthContext,
  o: { key: string; timeZone: string; maxChars: number },
): Promise<SessionSoFar> {
  const { d, viewer, mode } = await scopeOf(env, auth);
  // Receipts are filed by the agent's session id, before the session's first event may have arrived.
  const [id, memories] = await Promise.all([findVisibleSession(d, viewer, o.key), receiptCounts(d, viewer, o.key)]);
  if (id === undefined) return { session: o.key, observations: 0, summarized: false, text: '', memories };
  const rec = await sessionRecordOf(d, viewer, id, SESSION_SO_FAR_ROWS);
  const text = renderSessionSoFar({
    observations: rec.observations,
    total: rec.total,
    summary: rec.summary,
    mode,
    timeZone: o.timeZone,
    maxChars: o.maxChars,
  });
  return { session: o.key, observations: rec.total, summarized: rec.summary !== null, text, memories };
}
