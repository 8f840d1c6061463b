// Pure text form of full observation records for MCP answers: compact, labelled, cheap to read.
import { dayAndClock } from '../recall/format';
import { iconFor, type RecallMode } from '../recall/mode';
import type { ObservationRecord } from '../recall/queries';

export function renderRecords(records: ObservationRecord[], missing: number[], mode: RecallMode, timeZone = 'UTC'): string {
  const out: string[] = [];
  for (const r of records) {
    out.push(`#${r.id} ${iconFor(mode, r.type)} ${r.type} · ${dayAndClock(Date.parse(r.createdAt), timeZone)} ${timeZone} · ${r.project} · @${r.author}`);
    out.push(`Title: ${r.title ?? 'Untitled'}`);
    if (r.subtitle) out.push(`Subtitle: ${r.subtitle}`);
    if (r.narrative) out.push(r.narrative);
    if (r.facts.length) out.push('Facts:', ...r.facts.map((f) => `- ${f}`));
    if (r.concepts.length) out.push(`Concepts: ${r.concepts.join(', ')}`);
    if (r.filesModified.length) out.push(`Modified: ${r.filesModified.join(', ')}`);
    if (r.filesRead.length) out.push(`Read: ${r.filesRead.join(', ')}`);
    out.push('');
  }
  if (missing.length) out.push(`Not found: ${missing.map((id) => `#${id}`).join(', ')}`);
  if (!records.length && !missing.length) out.push('No ids given.');
  return `${out.join('\n').trimEnd()}\n`;
}
