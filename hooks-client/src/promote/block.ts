// cairn's block in a repository's instruction file (pure): the records `cairn promote` turns into rules, one line
// each with its record id, between two marker lines. Record text is other people's data going into a file agents
// read as instructions, so it is made inert (#shared/inert: no control, bidi or line-break character), one line,
// bounded, and cannot open or close an HTML comment (the markers are comments): a hostile title cannot end the
// block early, start a second one or hide what follows it. A second promote rewrites the one block (rules by id)
// instead of adding another. Linear in the file's length.
import { inertLine } from '#shared/inert';

export const BLOCK_START = '<!-- cairn:promoted:start -->';
export const BLOCK_END = '<!-- cairn:promoted:end -->';
/** A rule's text at most (characters); longer titles are cut with an ellipsis. */
export const RULE_MAX = 300;
/** Rules a block holds at most: past this the file is no longer a short list of rules. */
export const BLOCK_MAX_RULES = 100;

const INTRO = [
  '## Team rules (from cairn)',
  '',
  "Promoted from the team's memory with `cairn promote`; each rule names its record (`cairn history <id>`).",
  '',
];
/** A rule line as this block writes it: `- <text> (cairn #12)`. */
const RULE_LINE = /^- (.*) \(cairn #(\d{1,15})\)$/;

export interface RuleRecord {
  id: number;
  title: string | null;
  subtitle: string | null;
  narrative: string | null;
}

/** One line of text for a rule: inert, whitespace collapsed, no comment delimiters, at most RULE_MAX characters. */
export function ruleText(r: RuleRecord): string {
  // A title or subtitle is one line as stored; a narrative gives its first line when there is nothing else.
  const title = r.title?.trim() ?? '';
  const subtitle = r.subtitle?.trim() ?? '';
  const head = title || subtitle || (r.narrative ?? '').trim().split('\n', 1)[0]!;
  const sub = title && subtitle ? ` — ${subtitle}` : '';
  let text = inertLine(head + sub)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/<!--/g, '&lt;!--')
    .replace(/--!?>/g, '--&gt;');
  const chars = [...text];
  if (chars.length > RULE_MAX) text = `${chars.slice(0, RULE_MAX - 1).join('')}…`;
  return text;
}

export type BlockResult = { text: string; rules: number } | { refused: string };

/** Where the block is in `lines` (marker lines compared trimmed), none, or why the file's markers cannot be read. */
function findBlock(lines: string[]): { start: number; end: number } | null | { refused: string } {
  const starts: number[] = [];
  const ends: number[] = [];
  lines.forEach((l, i) => {
    const t = l.trim();
    if (t === BLOCK_START) starts.push(i);
    else if (t === BLOCK_END) ends.push(i);
  });
  if (!starts.length && !ends.length) return null;
  if (starts.length !== 1 || ends.length !== 1 || ends[0]! < starts[0]!)
    return {
      refused: `it has ${starts.length} start and ${ends.length} end markers of cairn's block; keep one of each (start first) and run the command again`,
    };
  return { start: starts[0]!, end: ends[0]! };
}

/** `text`'s lines, each with its own line end (the last may have none). */
const linesOf = (text: string): string[] => text.match(/[^\n]*\n|[^\n]+$/g) ?? [];

/**
 * The instruction file with `records` as rules in cairn's block: an existing block keeps its other rule lines (as
 * a person may have worded them) and gets these, a record already there replaced in place; a file without one gets
 * it at its end; an absent file (null) is the block alone. Every line outside the block is kept byte for byte; the
 * block's lines take the file's line ending.
 */
export function withRules(file: string | null, records: RuleRecord[]): BlockResult {
  const eol = file?.includes('\r\n') ? '\r\n' : '\n';
  const lines = linesOf(file ?? '');
  const at = findBlock(lines);
  if (at && 'refused' in at) return at;
  const fresh = new Map(records.map((r) => [r.id, `- ${ruleText(r)} (cairn #${r.id})`]));
  const rules: string[] = [];
  if (at)
    for (const line of lines.slice(at.start + 1, at.end)) {
      const m = RULE_LINE.exec(line.trim());
      if (!m) continue;
      const id = Number(m[2]);
      rules.push(fresh.get(id) ?? line.trim());
      fresh.delete(id);
    }
  rules.push(...fresh.values());
  if (rules.length > BLOCK_MAX_RULES)
    return {
      refused: `its block would hold ${rules.length} rules, more than ${BLOCK_MAX_RULES}; remove some from the block first`,
    };
  const block = [BLOCK_START, ...INTRO, ...rules, BLOCK_END].map((l) => l + eol);
  let out: string[];
  if (at) out = [...lines.slice(0, at.start), ...block, ...lines.slice(at.end + 1)];
  else if (lines.length) {
    const last = lines[lines.length - 1]!;
    const closed = last.endsWith('\n') ? lines : [...lines.slice(0, -1), last + eol];
    out = [...closed, ...(last.trim() ? [eol] : []), ...block];
  } else out = block;
  return { text: out.join(''), rules: rules.length };
}
