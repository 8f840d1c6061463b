// Pure text form of full observation, session summary and prompt records for MCP answers: compact, labelled, cheap to read.
import { DATA_NOTICE, neutralize } from '#shared/fence';
import { dayAndClock } from '../recall/format';
import { iconFor, type RecallMode } from '../recall/mode';
import type { ObservationRecord, PromptRecord, SummaryRecord, WireEvidence } from '#shared/wire/records';
import { evidenceLabel, type EvidenceReason } from '#shared/evidence';

/** `Evidence: changed (code changed: …)`: the record's line saying how its code stands in the caller's checkout. */
const recordEvidenceLine = (e: WireEvidence): string =>
  `E${evidenceLabel({ value: e.value, reasons: e.reasons as EvidenceReason[], missingNames: e.missing_names }).slice(1)}`;

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
  const any = records.length + other.summaries.length + other.prompts.length > 0;
  // Every stored text is fenced (src/shared/fence.ts), and the answer says first that it is data, not instructions.
  const n = neutralize;
  const out: string[] = any ? [DATA_NOTICE, ''] : [];
  for (const r of records) {
    const device = r.device ? `/${n(r.device)}` : '';
    out.push(
      `#${r.id} ${iconFor(mode, r.type)} ${n(r.type)} · ${dayAndClock(Date.parse(r.createdAt), timeZone)} ${timeZone} · ${n(r.project)} · @${r.author}${device}`,
    );
    out.push(`Title: ${n(r.title ?? 'Untitled')}`);
    if (r.evidence) out.push(n(recordEvidenceLine(r.evidence)));
    if (r.supersededBy != null) {
      out.push(
        r.supersededBy === r.id
          ? 'Status: outdated (nothing replaces it)'
          : `Status: superseded by #${r.supersededBy}; read that one instead`,
      );
    }
    if (r.subtitle) out.push(`Subtitle: ${n(r.subtitle)}`);
    if (r.narrative) out.push(n(r.narrative));
    if (r.facts.length) out.push('Facts:', ...r.facts.map((f) => `- ${n(f)}`));
    if (r.concepts.length) out.push(`Concepts: ${n(r.concepts.join(', '))}`);
    if (r.filesModified.length) out.push(`Modified: ${n(r.filesModified.join(', '))}`);
    if (r.filesRead.length) out.push(`Read: ${n(r.filesRead.join(', '))}`);
    out.push('');
  }
  for (const s of other.summaries) {
    out.push(
      `S${s.id} session summary · ${dayAndClock(s.createdAt, timeZone)} ${timeZone} · ${n(s.project)} · @${s.author}`,
    );
    const fields: [string, string | null][] = [
      ['Request', s.request],
      ['Investigated', s.investigated],
      ['Learned', s.learned],
      ['Completed', s.completed],
      ['Next steps', s.nextSteps],
      ['Notes', s.notes],
    ];
    for (const [label, value] of fields) if (value?.trim()) out.push(`${label}: ${n(value.trim())}`);
    out.push('');
  }
  for (const p of other.prompts) {
    out.push(
      `P${p.id} prompt ${p.promptNumber} · ${dayAndClock(p.createdAt, timeZone)} ${timeZone} · ${n(p.project)} · @${p.author}`,
    );
    out.push(n(p.text), '');
  }
  if (missing.length)
    out.push(`Not found: ${missing.map((id) => (typeof id === 'number' ? `#${id}` : id)).join(', ')}`);
  if (!any && !missing.length) out.push('No ids given.');
  return `${out.join('\n').trimEnd()}\n`;
}
