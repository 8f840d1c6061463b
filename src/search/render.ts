// Compact text form of search results for agents: one line per result, id first, cheap to read.
import { neutralizePrefix } from '#shared/fence';
import { evidenceLabel } from '#shared/evidence';
import type { RecordKind } from './params';
import type { SearchResponse } from './search';

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM` in UTC: stable across machines and short. */
export function shortTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

const PREFIX: Record<RecordKind, string> = { observation: '#', summary: 'S', prompt: 'P' };

/** How a result is named in text: `#12` observation, `S12` session summary, `P12` user prompt. */
export const recordRef = (kind: RecordKind, id: number) => `${PREFIX[kind]}${id}`;

/**
 * ` [superseded by #N]`, ` [outdated]`, ` [flagged for review]` or ` [promoted]` after a result line, then ` [faded]`
 * for a record nobody used within the team's fade_after_days; empty for a current record in use.
 */
export function correctionNote(r: {
  id: number;
  supersededBy?: number | null;
  flagged?: boolean;
  promoted?: boolean;
  faded?: boolean;
}): string {
  const faded = r.faded ? ' [faded]' : '';
  if (r.supersededBy != null)
    return `${r.supersededBy === r.id ? ' [outdated]' : ` [superseded by #${r.supersededBy}]`}${faded}`;
  return `${r.flagged ? ' [flagged for review]' : r.promoted ? ' [promoted]' : ''}${faded}`;
}

/** Renders results as `#id|S<id>|P<id>  time  type  title  (project, @author, ~N tok)` lines plus a one-line header. */
export function renderSearchText(res: SearchResponse, offset = 0): string {
  if (res.results.length === 0) return `No matches (mode ${res.mode}).\n`;
  const from = offset + 1;
  const to = offset + res.results.length;
  const others = res.results.some((r) => r.kind !== 'observation') ? ' (also "S12" summaries, "P7" prompts)' : '';
  const lines = [`${from}-${to} of ${res.total} (mode ${res.mode}); full records: get_observations ids=…${others}`];
  for (const r of res.results) {
    // Stored text, fenced: no tag, frame marker or invisible character reaches the agent (src/shared/fence.ts).
    // Every stored field, the type and the author too: rows stored before types were a closed set keep theirs.
    const line = (s: string, max: number) => neutralizePrefix(s, max).replace(/\s+/g, ' ').trim();
    const title = line(r.title ?? '(untitled)', 2_000);
    // Observations say how their evidence stands in the caller's checkout (its names are stored text: fenced).
    const evidence = r.kind === 'observation' ? `  ${line(evidenceLabel(r.evidence), 300)}` : '';
    lines.push(
      `${recordRef(r.kind, r.id)}  ${shortTime(r.createdAt)}  ${line(r.type, 60)}  ${title}  (${line(r.projectKey, 300)}, @${line(r.author, 200)}, ~${r.tokens} tok)${correctionNote(r)}${evidence}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
