// Pure renderers of the team's day (issue 36): rows of a window grouped by project, then person, newest project first;
// as plain text (`cairn standup`), as JSON, and as a Slack-compatible webhook message (the digest). Every stored text
// is fenced (safeLine) and, for Slack, its control characters `& < >` escaped, so no row can mention a channel, link
// somewhere or break the message. Bounded in lines and characters.
import { dayAndClock, safeLine } from '../recall/format';
import type { DayRows } from './queries';

export interface DayGroup {
  project: string;
  people: {
    handle: string;
    summaries: { id: number; createdAt: number; request: string; completed: string; nextSteps: string }[];
    observations: { id: number; createdAt: number; type: string; title: string | null }[];
  }[];
}

/** Projects (newest activity first), each with its people (most rows first), each with their rows oldest first. */
export function groupDay(rows: DayRows): DayGroup[] {
  const projects = new Map<string, { last: number; people: Map<string, DayGroup['people'][number]> }>();
  const personOf = (project: string, handle: string, at: number) => {
    let p = projects.get(project);
    if (!p) projects.set(project, (p = { last: at, people: new Map() }));
    p.last = Math.max(p.last, at);
    let who = p.people.get(handle);
    if (!who) p.people.set(handle, (who = { handle, summaries: [], observations: [] }));
    return who;
  };
  for (const s of rows.summaries) personOf(s.project, s.author, s.createdAt).summaries.push(s);
  for (const o of rows.observations) personOf(o.project, o.author, o.createdAt).observations.push(o);
  const size = (p: DayGroup['people'][number]) => p.summaries.length + p.observations.length;
  return [...projects.entries()]
    .sort(([ak, a], [bk, b]) => b.last - a.last || ak.localeCompare(bk))
    .map(([project, p]) => ({
      project,
      people: [...p.people.values()]
        .sort((a, b) => size(b) - size(a) || a.handle.localeCompare(b.handle))
        .map((who) => ({
          ...who,
          summaries: [...who.summaries].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id),
          observations: [...who.observations].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id),
        })),
    }));
}

export interface DayHeader {
  /** `ana` (their own standup), `team` or the team's name. */
  who: string;
  from: number;
  until: number;
  timeZone: string;
  /** The window held more rows than were read. */
  more: boolean;
}

const TITLE = 110;
const FIELD = 200;
/** Observations shown per person and project; the rest are counted. */
const OBS_PER_PERSON = 12;

/** One person's lines in a project: their summaries (with what was done and what is next), then observation titles. */
function personLines(p: DayGroup['people'][number], indent: string): string[] {
  const out: string[] = [];
  for (const s of p.summaries) {
    out.push(`${indent}S${s.id} ${safeLine(s.request, TITLE, 'session')}`);
    if (s.completed.trim()) out.push(`${indent}  done: ${safeLine(s.completed, FIELD)}`);
    if (s.nextSteps.trim()) out.push(`${indent}  next: ${safeLine(s.nextSteps, FIELD)}`);
  }
  for (const o of p.observations.slice(-OBS_PER_PERSON))
    out.push(`${indent}#${o.id} ${safeLine(o.type, 20)}: ${safeLine(o.title, TITLE, 'Untitled')}`);
  const hidden = p.observations.length - OBS_PER_PERSON;
  if (hidden > 0) out.push(`${indent}(${hidden} earlier observation${hidden === 1 ? '' : 's'} not shown)`);
  return out;
}

export const STANDUP_MAX_CHARS = 12_000;

/** `cairn standup`: plain text, within STANDUP_MAX_CHARS. */
export function renderStandup(groups: DayGroup[], h: DayHeader): string {
  const head = `Standup · ${safeLine(h.who, 60)} · ${dayAndClock(h.from, h.timeZone)} to ${dayAndClock(h.until, h.timeZone)} ${h.timeZone}`;
  if (!groups.length) return `${head}\nNothing recorded in this window.\n`;
  const out = [head];
  let used = head.length;
  for (const g of groups) {
    const block = [`## ${safeLine(g.project, 200)}`];
    for (const p of g.people) block.push(`  @${safeLine(p.handle, 64)}`, ...personLines(p, '    '));
    const size = block.join('\n').length + 1;
    if (used + size > STANDUP_MAX_CHARS) {
      out.push('… more in this window: narrow it with --since or --project');
      break;
    }
    out.push(...block);
    used += size;
  }
  if (h.more) out.push('… the window holds more than was read: narrow it with --since or --project');
  return `${out.join('\n')}\n`;
}

/** Slack's own escaping of message text: `&`, `<` and `>` (so no `<!channel>`, `<@U…>` or `<url|text>` survives). */
export const slackEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Slack caps a section's text at 3,000 characters and a message at 50 blocks. */
const SECTION_MAX = 2_900;
const BLOCKS_MAX = 45;

export interface SlackMessage {
  text: string;
  blocks: (
    | { type: 'header'; text: { type: 'plain_text'; text: string } }
    | { type: 'section'; text: { type: 'mrkdwn'; text: string } }
    | { type: 'context'; elements: { type: 'mrkdwn'; text: string }[] }
  )[];
}

/**
 * The digest as a Slack incoming-webhook message (`text` for notifications and clients without blocks; `blocks`, one
 * section per project): what any Slack-compatible receiver takes.
 */
export function renderSlackDigest(groups: DayGroup[], h: DayHeader): SlackMessage {
  const title = `cairn digest · ${safeLine(h.who, 60)} · ${dayAndClock(h.from, 'UTC')} to ${dayAndClock(h.until, 'UTC')} UTC`;
  const blocks: SlackMessage['blocks'] = [{ type: 'header', text: { type: 'plain_text', text: title.slice(0, 150) } }];
  const plain = [title];
  if (!groups.length) plain.push('Nothing recorded in this window.');
  for (const g of groups) {
    if (blocks.length >= BLOCKS_MAX) {
      plain.push('… more projects in this window');
      blocks.push({
        type: 'context',
        elements: [{ type: 'mrkdwn', text: 'More projects in this window: cairn standup --team' }],
      });
      break;
    }
    const lines = [`*${slackEscape(safeLine(g.project, 200))}*`];
    for (const p of g.people) {
      lines.push(`@${slackEscape(safeLine(p.handle, 64))}`);
      for (const l of personLines(p, '  ')) lines.push(slackEscape(l));
    }
    let text = lines.join('\n');
    if (text.length > SECTION_MAX) text = `${text.slice(0, SECTION_MAX - 2)}\n…`;
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
    plain.push(text);
  }
  if (!groups.length)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: 'Nothing recorded in this window.' } });
  return { text: plain.join('\n').slice(0, 39_000), blocks };
}
