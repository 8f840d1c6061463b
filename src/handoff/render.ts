// Pure renderer of a handoff (issue 36): what a session on another machine (or a teammate's) was asked, did, decided
// and left open, where it was in git, and whether the reader's checkout is there. Inside the one `<cairn-context>`
// frame with its data notice, every stored text fenced (safeLine); bounded in characters. No I/O, `now` passed in.
import { DATA_NOTICE } from '#shared/fence';
import type { SummaryContent } from '#shared/wire/records';
import { HISTORY_ABBREV, type GitView } from '#shared/git';
import { jsonList } from '../lib/json-list';
import { dayAndClock, safeLine } from '../recall/format';
import { iconFor, type RecallMode } from '../recall/mode';
import { by, CONTEXT_CLOSE, CONTEXT_OPEN, heldMark } from '../recall/render-context';

export interface HandoffInput {
  session: {
    key: string;
    project: string;
    author: string;
    device: string | null;
    platform: string;
    startedAt: number;
    endedAt: number | null;
    gitBranch: string | null;
    gitCommit: string | null;
  };
  prompts: { number: number; text: string; createdAt: number }[];
  summary: (Omit<SummaryContent, 'notes'> & { id: number; createdAt: number }) | null;
  /** Newest first, as read. */
  work: HandoffObservation[];
  todos: HandoffObservation | null;
  notes: HandoffObservation[];
  mode: RecallMode;
  /** The reader's handle: their own session is not marked with `@handle`. */
  viewer: string;
  /** The reader's checkout, when its client sent it: says whether it is on the session's branch and commit. */
  checkout: GitView | null;
  now: number;
  timeZone: string;
  maxChars: number;
}

export interface HandoffObservation {
  id: number;
  createdAt: number;
  type: string;
  title: string | null;
  narrative: string | null;
  facts: string;
  gitBranch: string | null;
  gitCommit: string | null;
  held?: string | null;
}

/** Of the session-start injection, what a handoff may take by default (the index keeps the rest). */
export const HANDOFF_MAX_CHARS = 3_500;
const LINE_MAX = 160;
const FIELD_MAX = 240;

/** Where the session was last: the newest observation that knew its checkout, else the session's first event. */
export function lastCheckout(input: Pick<HandoffInput, 'session' | 'work' | 'todos' | 'notes'>): {
  branch: string | null;
  commit: string | null;
} {
  const rows = [...input.work, ...(input.todos ? [input.todos] : []), ...input.notes]
    .filter((r) => r.gitBranch || r.gitCommit)
    .sort((a, b) => b.createdAt - a.createdAt);
  const at = rows[0];
  return at
    ? { branch: at.gitBranch, commit: at.gitCommit }
    : { branch: input.session.gitBranch, commit: input.session.gitCommit };
}

/** One sentence on the reader's checkout against where the session was (null without a checkout to judge). */
export function checkoutLine(
  was: { branch: string | null; commit: string | null },
  here: GitView | null,
): string | null {
  if (!here || (!here.branch && !here.head)) return null;
  const where = `${here.branch ? `on ${safeLine(here.branch, 60)}` : 'detached'}${here.head ? ` at ${here.head.slice(0, 12)}` : ''}`;
  const sameBranch = !!was.branch && was.branch === here.branch;
  if (was.commit && here.head === was.commit)
    return `This checkout: ${where}, the same commit${sameBranch || !was.branch ? '' : ' (another branch name)'}.`;
  const has = !!was.commit && here.history.includes(was.commit.slice(0, HISTORY_ABBREV));
  const branchPart = was.branch
    ? sameBranch
      ? 'the same branch'
      : `not on ${safeLine(was.branch, 60)}`
    : 'the session had no branch';
  const commitPart = !was.commit
    ? ''
    : has
      ? `; its commit is in this checkout's history (this checkout is ahead of it)`
      : `; this checkout does not have its commit ${was.commit.slice(0, 12)} (fetch and switch to it to continue there)`;
  return `This checkout: ${where}: ${branchPart}${commitPart}.`;
}

const obsText = (o: HandoffObservation) => safeLine(o.narrative?.trim() ? o.narrative : o.title, LINE_MAX, 'Untitled');

/** The block, '' when the session has nothing the reader may read. Sections are dropped from the bottom to fit. */
export function renderHandoff(input: HandoffInput): string {
  const { session: s, summary, mode, timeZone } = input;
  if (!input.prompts.length && !summary && !input.work.length && !input.todos && !input.notes.length) return '';
  const last = Math.max(
    s.startedAt,
    s.endedAt ?? 0,
    ...input.prompts.map((p) => p.createdAt),
    ...(summary ? [summary.createdAt] : []),
    ...input.work.map((o) => o.createdAt),
    ...(input.todos ? [input.todos.createdAt] : []),
    ...input.notes.map((o) => o.createdAt),
  );
  const agent = s.platform && s.platform !== 'claude-code' ? ` · ${safeLine(s.platform, 30)}` : '';
  const head = [
    CONTEXT_OPEN,
    `# cairn handoff · ${safeLine(s.project, 200)} · session ${safeLine(s.key, 80)}${by(input.viewer, s.author, s.device)}${agent} · last active ${dayAndClock(last, timeZone)} ${timeZone}`,
    DATA_NOTICE,
    'You are picking up this session where it stopped (on another machine or from a teammate). What it was about:',
  ];
  const sections: string[][] = [];
  if (input.prompts.length)
    sections.push([
      '## Asked (its last prompts, oldest first)',
      ...input.prompts.map((p) => `P${p.number} ${safeLine(p.text, LINE_MAX, '(empty)')}`),
    ]);
  if (input.work.length)
    sections.push([
      '## Done (its newest observations, oldest first)',
      ...[...input.work]
        .reverse()
        .map((o) => `${o.id} ${iconFor(mode, o.type)} ${safeLine(o.title, LINE_MAX, 'Untitled')}${heldMark(o.held)}`),
    ]);
  if (summary) {
    const fields: [string, string][] = [
      ['Request', summary.request],
      ['Completed', summary.completed],
      ['Learned', summary.learned],
      ['Next', summary.nextSteps],
    ];
    sections.push([
      `## Decided and learned (latest summary S${summary.id})`,
      ...fields.filter(([, v]) => v.trim()).map(([k, v]) => ` ${k}: ${safeLine(v, FIELD_MAX)}`),
    ]);
  }
  const open = input.todos ? jsonList(input.todos.facts) : [];
  if (input.todos)
    sections.push(
      open.length
        ? ['## Open (unfinished todos)', ...open.map((t) => `- ${safeLine(t, LINE_MAX)}`)]
        : ['## Open (unfinished todos)', '- none: every todo of the session was done'],
    );
  if (input.notes.length)
    sections.push(['## Handoff notes', ...input.notes.map((n) => `${n.id} ${obsText(n)}${heldMark(n.held)}`)]);
  const was = lastCheckout(input);
  const where = [
    `## Where it was`,
    was.branch || was.commit
      ? `Branch ${was.branch ? safeLine(was.branch, 80) : '(detached)'}${was.commit ? ` at commit ${was.commit.slice(0, 12)}` : ''}.`
      : 'Branch and commit unknown (recorded outside a git checkout, or by an older client).',
    checkoutLine(was, input.checkout) ?? 'Compare with this checkout: git status, git log -1.',
  ];
  const tail = ['Tools: get_observations([ids]) · timeline(anchor=id) · search(query)', CONTEXT_CLOSE];
  // The essentials first: where it was and what is open survive a short budget; older context goes first.
  const order = [
    where,
    ...sections.filter((x) => x[0]!.startsWith('## Open')),
    ...sections.filter((x) => !x[0]!.startsWith('## Open')),
  ];
  let used = [...head, ...tail].join('\n').length;
  const kept = new Set<string[]>();
  for (const part of order) {
    const size = part.join('\n').length + 1;
    if (used + size > input.maxChars) continue;
    used += size;
    kept.add(part);
  }
  const body = [...sections, where].filter((p) => kept.has(p)).flat();
  return [...head, ...body, ...tail].join('\n');
}
