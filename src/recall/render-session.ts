// Pure renderer of "this session so far": what cairn stored of the running session, injected after Claude Code
// compacts the conversation so the thread survives the summary it keeps. Rows in, bounded text out.
import type { SummaryContent } from '#shared/wire/records';
import { clockOf, safeLine } from './format';
import { iconFor, type RecallMode } from './mode';

export const SESSION_OPEN = '<cairn-session-so-far>';
export const SESSION_CLOSE = '</cairn-session-so-far>';

export interface SessionRow {
  id: number;
  createdAt: number;
  type: string;
  title: string | null;
  subtitle: string | null;
}

export interface SessionSummaryRow extends Pick<SummaryContent, 'request' | 'completed' | 'learned' | 'nextSteps'> {
  id: number;
  createdAt: number;
}

export interface SessionSoFarInput {
  /** Newest first, as read. */
  observations: SessionRow[];
  total: number;
  summary: SessionSummaryRow | null;
  mode: RecallMode;
  timeZone: string;
  /** Upper bound of the whole block, in characters (the hook's injection budget is shared with the index). */
  maxChars: number;
}

const TITLE_MAX = 100;
const FIELD_MAX = 240;

/** '' when the session has nothing stored yet; otherwise the block, oldest row first, never over maxChars. */
export function renderSessionSoFar(input: SessionSoFarInput): string {
  const { observations, summary, mode, timeZone } = input;
  if (!observations.length && !summary) return '';
  const head = [
    SESSION_OPEN,
    `# This session so far (cairn recorded ${input.total} observation${input.total === 1 ? '' : 's'}; the conversation above was compacted)`,
  ];
  const tail: string[] = [];
  if (summary) {
    tail.push(
      `Latest summary S${summary.id} ${clockOf(summary.createdAt, timeZone)}: ${safeLine(summary.request, FIELD_MAX, 'session')}`,
    );
    for (const [k, v] of [
      ['Completed', summary.completed],
      ['Learned', summary.learned],
      ['Next', summary.nextSteps],
    ] as const) {
      if (v.trim()) tail.push(` ${k}: ${safeLine(v, FIELD_MAX)}`);
    }
  }
  tail.push('Full records: get_observations([ids]) · timeline(anchor=id)', SESSION_CLOSE);
  // Newest rows are the ones worth keeping when the budget is short: add from newest back, then print oldest first.
  let used = [...head, ...tail].join('\n').length;
  const lines: string[] = [];
  for (const o of observations) {
    const line = `${o.id} ${clockOf(o.createdAt, timeZone)} ${iconFor(mode, o.type)} ${safeLine(o.title, TITLE_MAX, 'Untitled')}`;
    if (used + line.length + 1 > input.maxChars) break;
    used += line.length + 1;
    lines.unshift(line);
  }
  const omitted = input.total - lines.length;
  if (omitted > 0)
    lines.unshift(`(${omitted} earlier observation${omitted === 1 ? '' : 's'} of this session not shown)`);
  const text = [...head, ...lines, ...tail].join('\n');
  return text.length <= input.maxChars
    ? text
    : `${text.slice(0, Math.max(0, input.maxChars - SESSION_CLOSE.length - 1))}\n${SESSION_CLOSE}`;
}
