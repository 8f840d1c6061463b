// Pure text form of full observation, session summary and prompt records for MCP answers: compact, labelled, cheap to read.
import { dayAndClock } from '../recall/format';
import { iconFor, type RecallMode } from '../recall/mode';
import type { ObservationRecord } from '../recall/queries';
import type { PromptRecord, SummaryRecord } from '../search/records';

export interface OtherRecords {
  summaries: SummaryRecord[];
  prompts: PromptRecord[];
}

/** `missing` holds refs as the agent wrote them (`12`, `S3`, `P7`) that were not found or not readable. */
export function renderRecords(
  records: ObservationRecord[],
  missing: (number | string)[],
  mode: RecallMode,
  timeZone = 'UTC',
  other: OtherRecords = { summaries: [], prompts: [] },
): string {
  const out: string[] = [];
  for (const r of records) {
    out.push(`#${r.id} ${iconFor(mode, r.type)} ${r.type} · ${dayAndClock(Date.parse(r.createdAt), timeZone)} ${timeZone} · ${r.project} · @${r.author}`);
    out.push(`Title: ${r.title ?? 'Untitled'}`);
    if (r.supersededBy != null) {
      out.push(r.supersededBy === r.id ? 'Status: outdated (nothing replaces it)' : `Status: superseded by #${r.supersededBy}; read that one instead`);
    }
    if (r.subtitle) out.push(`Subtitle: ${r.subtitle}`);
    if (r.narrative) out.push(r.narrative);
    if (r.facts.length) out.push('Facts:', ...r.facts.map((f) => `- ${f}`));
    if (r.concepts.length) out.push(`Concepts: ${r.concepts.join(', ')}`);
    if (r.filesModified.length) out.push(`Modified: ${r.filesModified.join(', ')}`);
    if (r.filesRead.length) out.push(`Read: ${r.filesRead.join(', ')}`);
    out.push('');
  }
  for (const s of other.summaries) {
    out.push(`S${s.id} session summary · ${dayAndClock(s.createdAt, timeZone)} ${timeZone} · ${s.project} · @${s.author}`);
    const fields: [string, string | null][] = [
      ['Request', s.request], ['Investigated', s.investigated], ['Learned', s.learned], ['Completed', s.completed], ['Next steps', s.nextSteps], ['Notes', s.notes],
    ];
    for (const [label, value] of fields) if (value?.trim()) out.push(`${label}: ${value.trim()}`);
    out.push('');
  }
  for (const p of other.prompts) {
    out.push(`P${p.id} prompt ${p.promptNumber} · ${dayAndClock(p.createdAt, timeZone)} ${timeZone} · ${p.project} · @${p.author}`);
    out.push(p.text, '');
  }
  const any = records.length + other.summaries.length + other.prompts.length > 0;
  if (missing.length) out.push(`Not found: ${missing.map((id) => (typeof id === 'number' ? `#${id}` : id)).join(', ')}`);
  if (!any && !missing.length) out.push('No ids given.');
  return `${out.join('\n').trimEnd()}\n`;
}
