// Pure renderer for per-prompt context: the few stored observations most related to what the user just asked.
import { dayAndClock, safeLine } from './format';
import { iconFor, type RecallMode } from './mode';
import type { ObservationRecord } from '#shared/wire/records';
import { DATA_NOTICE } from '#shared/fence';
import { by, CONTEXT_CLOSE, CONTEXT_OPEN, evidenceTag } from './render-context';
import type { Judgement } from '#shared/evidence';

const NARRATIVE_MAX = 500;

export interface PromptContextInput {
  records: ObservationRecord[];
  /** Each record's evidence against the reader's checkout, when judged. */
  evidence?: ReadonlyMap<number, Judgement>;
  mode: RecallMode;
  viewer: string;
  timeZone: string;
}

/** Empty string when nothing matched, so the hook adds nothing. */
export function renderPromptContext(input: PromptContextInput): string {
  const { records, mode, timeZone } = input;
  if (!records.length) return '';
  const out = [
    CONTEXT_OPEN,
    'cairn found earlier notes that may bear on this request (best match first).',
    DATA_NOTICE,
  ];
  for (const r of records) {
    const who = by(input.viewer, r.author, r.device);
    out.push(
      `- ${r.id} ${dayAndClock(Date.parse(r.createdAt), timeZone)} ${iconFor(mode, r.type)} ${safeLine(r.title, 120, 'Untitled')}${evidenceTag(input.evidence?.get(r.id))}${who}`,
    );
    const body = safeLine(r.narrative || r.facts.join(' · '), NARRATIVE_MAX);
    if (body) out.push(`  ${body}`);
  }
  out.push('More: get_observations([ids]) or timeline(anchor=id).', CONTEXT_CLOSE);
  return out.join('\n');
}
