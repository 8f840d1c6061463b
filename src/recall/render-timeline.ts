// Pure parts of the timeline: reading an anchor string, and rendering items around it as text.
import { clockOf, dayOf, safeLine } from './format';
import { iconFor, type RecallMode } from './mode';
import { evidenceLabel, type Judgement } from '#shared/evidence';

export type Anchor =
  | { kind: 'observation'; id: number }
  | { kind: 'summary'; id: number }
  | { kind: 'time'; at: number };

/**
 * `123` / `#123` → observation, `S12` / `#S12` → session summary, an ISO date or date-time → a moment.
 * Anything else is null (the caller answers 400); bare digits are never read as a time.
 */
export function parseAnchor(raw: string | number): Anchor | null {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw > 0 ? { kind: 'observation', id: raw } : null;
  const s = raw.trim();
  let m = /^#?(\d{1,15})$/.exec(s);
  if (m) return Number(m[1]) > 0 ? { kind: 'observation', id: Number(m[1]) } : null;
  m = /^#?[sS](\d{1,15})$/.exec(s);
  if (m) return Number(m[1]) > 0 ? { kind: 'summary', id: Number(m[1]) } : null;
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s)) {
    const at = Date.parse(s);
    if (Number.isFinite(at)) return { kind: 'time', at };
  }
  return null;
}

export type TimelineItem =
  | {
      kind: 'observation';
      id: number;
      at: number;
      type: string;
      title: string | null;
      project: string;
      author: string;
      tokens: number;
      anchor: boolean;
      /** Its evidence against the reader's checkout (absent: not judged). */
      evidence?: Judgement;
    }
  | { kind: 'summary'; id: number; at: number; request: string; project: string; author: string; anchor: boolean };

export interface TimelineResult {
  anchor: { kind: Anchor['kind']; id: number | null; at: number };
  before: number;
  after: number;
  items: TimelineItem[];
}

export interface TimelineRenderInput {
  result: TimelineResult;
  mode: RecallMode;
  viewer: string;
  timeZone: string;
}

function anchorLabel(a: TimelineResult['anchor'], timeZone: string): string {
  if (a.kind === 'observation') return `#${a.id}`;
  if (a.kind === 'summary') return `session summary S${a.id}`;
  return `${dayOf(a.at, timeZone)} ${clockOf(a.at, timeZone)} ${timeZone}`;
}

export function renderTimeline(input: TimelineRenderInput): string {
  const { result, mode, timeZone } = input;
  const out = [
    `Timeline around ${anchorLabel(result.anchor, timeZone)}: ${result.items.length} entries, oldest first.`,
  ];
  if (!result.items.length) return `${out[0]}\n`;
  let day = '';
  const projects = new Set(result.items.map((i) => i.project));
  for (const item of result.items) {
    const d = dayOf(item.at, timeZone);
    if (d !== day) {
      out.push(`## ${d}`);
      day = d;
    }
    const who = item.author !== input.viewer ? ` @${item.author}` : '';
    const where = projects.size > 1 ? ` [${safeLine(item.project, 300, '')}]` : '';
    const mark = item.anchor ? '  <= anchor' : '';
    const clock = clockOf(item.at, timeZone);
    if (item.kind === 'summary') {
      out.push(
        `S${item.id} ${clock} session: ${safeLine(item.request, 120, '(no request recorded)')}${who}${where}${mark}`,
      );
    } else {
      out.push(
        `${item.id} ${clock} ${iconFor(mode, item.type)} ${safeLine(item.title, 120, 'Untitled')} (~${item.tokens}t)${who}${where}  ${safeLine(evidenceLabel(item.evidence), 200)}${mark}`,
      );
    }
  }
  out.push('Full records: get_observations([ids]).');
  return `${out.join('\n')}\n`;
}
