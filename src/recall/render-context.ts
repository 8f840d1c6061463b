// Pure renderer of the session-start context index: rows in, plain text out (no I/O, `now` passed in).
import { DATA_NOTICE, FRAME_NAME, neutralizePrefix } from '#shared/fence';
import { evidenceNote, type Judgement } from '#shared/evidence';
import type { SummaryContent } from '#shared/wire/records';
import { jsonList } from '../lib/json-list';
import { clockOf, dayAndClock, dayOf, safeLine, readTokens, thousands } from './format';
import { iconFor, type RecallMode } from './mode';

export const CONTEXT_OPEN = `<${FRAME_NAME}>`;
export const CONTEXT_CLOSE = `</${FRAME_NAME}>`;

export interface ContextObservation {
  id: number;
  createdAt: number;
  type: string;
  title: string | null;
  subtitle: string | null;
  narrative: string | null;
  /** Stored JSON array text. */
  facts: string;
  discoveryTokens: number;
  /** Author's handle, shown on every line (provenance: whose words these are). */
  author: string;
  /** The device it was recorded on, when known. */
  device?: string | null;
  /** Branch and commit it was recorded at (null: unknown). */
  gitBranch?: string | null;
  gitCommit?: string | null;
  /** Set by the ranking (branches.ts) when it comes from a branch that never merged here: shown as `⎇name`. */
  branchMark?: string | null;
  /** Held kinds while held back from other members (src/db/held.ts); only its author and admins are shown it. */
  held?: string | null;
  /** How it was stored (`observer`, `remember`, `prime`, …): primed notes are marked, so they read as a repository's outline. */
  source?: string | null;
  /** Its evidence against the reader's checkout (src/shared/evidence.ts); a changed row is marked `(code changed…)`. */
  evidence?: Judgement | null;
}

export interface ContextSummary extends Omit<SummaryContent, 'notes'> {
  id: number;
  createdAt: number;
  author: string;
  device?: string | null;
  /** The agent the session ran in; shown only when it is not Claude Code. */
  platform?: string;
  /** The session's branch and commit at its first event, and the ranking's mark (see ContextObservation). */
  gitBranch?: string | null;
  gitCommit?: string | null;
  branchMark?: string | null;
  held?: string | null;
}

/** ` [held: command,directive]` on a row held back from other members; nothing otherwise. */
export const heldMark = (held: string | null | undefined): string =>
  held ? ` [held: ${held.replace(/[^a-z,]/g, '')}]` : '';

/** Said once under the rows when any is held: why, who sees it, how it is released. */
export const HELD_NOTE =
  'Held: [held: …] rows read as instructions to an agent (kinds after the colon); only their author and admins see them until an admin releases them (cairn admin release <id>).';

/** ` [primed]` on a note `cairn prime` made from the repository (docs headings, commits, TODOs), not from a session's work. */
export const primedMark = (source: string | null | undefined): string => (source === 'prime' ? ' [primed]' : '');

/** ` [codex]` for a session recorded from another agent; nothing for Claude Code (the usual case costs no tokens). */
const platformTag = (platform: string | undefined): string =>
  platform && platform !== 'claude-code' ? ` [${safeLine(platform, 30)}]` : '';

export interface ContextInput {
  projects: string[];
  observations: ContextObservation[];
  summaries: ContextSummary[];
  mode: RecallMode;
  /** The caller's handle: their own rows carry no `@handle`. */
  viewer: string;
  /** How many of the newest observations are shown with their narrative. */
  fullCount: number;
  now: number;
  timeZone: string;
  /** A line about the memory itself (e.g. the observer budget is spent), shown under the header. */
  notice?: string | null;
  /** The caller's personal memory, already rendered (render-personal.ts): shown first, in every project. */
  personal?: readonly string[];
}

const TITLE_MAX = 90;
const REQUEST_MAX = 56;
const FIELD_MAX = 200;
const FULL_MAX = 600;
/** A row from a branch that never merged here keeps a shorter title: its mark then costs the index nothing extra. */
const UNMERGED_TITLE_MAX = 40;
const BRANCH_MAX = 24;
/** The legend's entry for the mark, shown only when a row carries one. */
export const UNMERGED_LEGEND = '⎇=unmerged branch';

/** A changed row keeps a shorter title, so its mark costs the index little. */
const CHANGED_TITLE_MAX = 60;
const CHANGED_NOTE_MAX = 110;

/**
 * ` (code changed…)` on a row whose cited code changed since it was recorded (the names it cites are the record's
 * own text: fenced and short); nothing for a current or unknown row.
 */
export const evidenceTag = (j: Judgement | null | undefined): string => {
  const note = j ? evidenceNote(j) : '';
  return note ? ` (${safeLine(note, CHANGED_NOTE_MAX)})` : '';
};

/** ` ⎇name` on a row recorded on a branch that never merged into the caller's (names are client text: fenced, short). */
const branchTag = (mark: string | null | undefined): string =>
  mark ? ` ⎇${safeLine(mark, BRANCH_MAX).replace(/\s+/g, '-')}` : '';

/** The same clock time as the row above. */
export const SAME_TIME = '″';

type Row =
  | { kind: 'obs'; at: number; o: ContextObservation; full: boolean }
  | { kind: 'sum'; at: number; s: ContextSummary };

/**
 * ` @handle/device` on a teammate's row: provenance, so a note reads as someone's words. The caller's own rows are
 * unmarked (the legend says so; the index is paid for on every session start). A device name is the client's, so
 * it is fenced and kept short.
 */
export const by = (viewer: string, author: string, device?: string | null): string => {
  if (!author || author === viewer) return '';
  const d = device ? safeLine(device, 24).replace(/[\s/@]+/g, '-') : '';
  return ` @${author}${d ? `/${d}` : ''}`;
};

function header(input: Pick<ContextInput, 'projects' | 'now' | 'timeZone'>): string {
  const where = input.projects.map((p) => neutralizePrefix(p, 300)).join(' + ') || '(no project)';
  return `# cairn memory · ${where} · ${dayAndClock(input.now, input.timeZone)} ${input.timeZone}`;
}

/** Text shown when a project has nothing stored yet (or nothing the mode lets through). */
export function renderWelcome(
  input: Pick<ContextInput, 'projects' | 'now' | 'timeZone' | 'notice' | 'personal'>,
): string {
  const personal = input.personal ?? [];
  return [
    CONTEXT_OPEN,
    header(input),
    ...(personal.length ? [DATA_NOTICE] : []),
    ...(input.notice ? [`Note: ${input.notice}`] : []),
    ...personal,
    'Nothing is stored for this project yet. cairn is recording this session; from the next session on,',
    'an index of what you and your teammates learned here will appear at this spot.',
    CONTEXT_CLOSE,
  ].join('\n');
}

function statsLine(obs: ContextObservation[], sums: ContextSummary[]): string {
  const read = obs.reduce((n, o) => n + readTokens(o), 0);
  const work = obs.reduce((n, o) => n + Math.max(0, o.discoveryTokens), 0);
  const workPart = work > 0 ? ` · work ~${thousands(work)}t` : '';
  return `Stats: ${obs.length} obs · ${sums.length} session${sums.length === 1 ? '' : 's'} · read ~${thousands(read)}t${workPart}`;
}

function fullBody(o: ContextObservation): string {
  const body = o.narrative?.trim() || jsonList(o.facts).join(' · ');
  return safeLine(body, FULL_MAX);
}

/**
 * The newest summary, when it is newer than every observation shown: it is then the last row of the index,
 * and its fields are printed right under it.
 */
function latestSummary(input: ContextInput): ContextSummary | null {
  const newest = [...input.summaries].sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)[0];
  if (!newest) return null;
  const newestObs = input.observations.reduce((m, o) => Math.max(m, o.createdAt), -Infinity);
  return newest.createdAt > newestObs ? newest : null;
}

function summaryFields(s: ContextSummary): string[] {
  const fields: [string, string][] = [
    ['Investigated', s.investigated],
    ['Learned', s.learned],
    ['Completed', s.completed],
    ['Next', s.nextSteps],
  ];
  return fields.filter(([, v]) => v.trim()).map(([k, v]) => ` ${k}: ${safeLine(v, FIELD_MAX)}`);
}

export function renderContext(input: ContextInput): string {
  const { observations, summaries, mode, timeZone } = input;
  if (!observations.length && !summaries.length) return renderWelcome(input);

  const fullIds = new Set(
    [...observations]
      .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
      .slice(0, Math.max(0, input.fullCount))
      .map((o) => o.id),
  );
  const latest = latestSummary(input);
  const rows: Row[] = [
    ...observations.map((o): Row => ({ kind: 'obs', at: o.createdAt, o, full: fullIds.has(o.id) })),
    ...summaries.map((s): Row => ({ kind: 'sum', at: s.createdAt, s })),
  ];
  // Oldest first, so the newest work sits closest to the agent's first turn; summaries after same-time rows.
  rows.sort(
    (a, b) =>
      a.at - b.at ||
      (a.kind === b.kind
        ? (a.kind === 'obs' ? a.o.id : a.s.id) - (b.kind === 'obs' ? b.o.id : b.s.id)
        : a.kind === 'obs'
          ? -1
          : 1),
  );

  // Only the icons that occur: the legend is paid for on every session start.
  const used = new Set(observations.map((o) => o.type));
  const icons = mode.types.filter((t) => used.has(t.id)).map((t) => `${t.emoji}${t.id}`);
  const marked = observations.some((o) => o.branchMark) || summaries.some((s) => s.branchMark);
  const out: string[] = [
    CONTEXT_OPEN,
    header(input),
    DATA_NOTICE,
    ...(input.notice ? [`Note: ${input.notice}`] : []),
    ...(input.personal ?? []),
    [
      'Legend: S=session',
      ...icons,
      `${SAME_TIME}=same time`,
      '@who/device=teammate',
      ...(marked ? [UNMERGED_LEGEND] : []),
    ].join(' '),
    statsLine(observations, summaries),
  ];

  let day = '';
  let lastClock = '';
  for (const row of rows) {
    const d = dayOf(row.at, timeZone);
    if (d !== day) {
      out.push(`## ${d}`);
      day = d;
      lastClock = '';
    }
    const clock = clockOf(row.at, timeZone);
    const shown = clock === lastClock ? SAME_TIME : clock;
    lastClock = clock;
    if (row.kind === 'sum') {
      out.push(
        `S${row.s.id} ${shown} ${safeLine(row.s.request, row.s.branchMark ? UNMERGED_TITLE_MAX : REQUEST_MAX, 'session')}${platformTag(row.s.platform)}${branchTag(row.s.branchMark)}${heldMark(row.s.held)}${by(input.viewer, row.s.author, row.s.device)}`,
      );
      if (row.s === latest) out.push(...summaryFields(row.s));
      continue;
    }
    const o = row.o;
    const changed = evidenceTag(o.evidence);
    const titleMax = o.branchMark ? UNMERGED_TITLE_MAX : changed ? CHANGED_TITLE_MAX : TITLE_MAX;
    const title = safeLine(o.title, titleMax, 'Untitled');
    const who = `${changed}${primedMark(o.source)}${branchTag(o.branchMark)}${heldMark(o.held)}${by(input.viewer, o.author, o.device)}`;
    if (row.full) {
      out.push(`**${o.id}** ${shown} ${iconFor(mode, o.type)} **${title}**${who}`);
      // Indented: a body line can never pass for a row, a day or the frame's own lines.
      const body = fullBody(o);
      if (body) out.push(` ${body}`);
    } else {
      out.push(`${o.id} ${shown} ${iconFor(mode, o.type)} ${title}${who}`);
    }
  }

  if (observations.some((o) => o.held) || summaries.some((s) => s.held)) out.push(HELD_NOTE);
  out.push('Tools: get_observations([ids]) · timeline(anchor=id) · search(query)', CONTEXT_CLOSE);
  return out.join('\n');
}
