// The resumable export (GET /api/admin/export?cursor=…): the same records as the plain export, in the same order,
// from a cursor the client sends back. One response reads export pages while its invocation keeps inside the step
// statement budget (the job step's: 200 on Paid, 40 on Free), so a team of any size is read in many bounded
// requests instead of one that D1 would cut off at 1,000 statements. After each page the stream carries a line
// `{"kind":"cursor","next":"<token>"}` (and inside a page every CURSOR_BYTES): everything before it is complete, so a client whose connection is cut
// keeps the records up to the last cursor line it received and asks again from there. The last line is another
// cursor (ask again) or `{"kind":"end"}`. Cursor lines are the protocol's, not records: a client leaves them out of
// the file it writes. A token is plain text (`users`, `project.12`, `observations.12.3400`, `done`) and names ids
// only: the projects it may reach are the caller's visible ones, checked again on every request.
import { currentUsage, spent } from '../db/meter';
import { AppError } from '../lib/errors';
import { exportStart, type ExportCursor, type ExportPager } from './export-cursor';
import type { HistoryStage } from './history';

/** Statements one export page costs at most (the page, its session keys, a project row, an observation page's evidence ids). */
export const PAGE_STATEMENTS = 4;
/** Record bytes between two cursor lines at most (plus one record): what a cut connection loses. */
export const CURSOR_BYTES = 32 * 1024;
/** Bytes one response carries at most (a cut connection repeats no more than this). */
export const RESPONSE_BYTES = 8 * 1024 * 1024;

const STAGE = /^(sessions|prompts|observations|summaries)\.(\d{1,15})\.(\d{1,15})$/;

export function cursorToken(c: ExportCursor): string {
  switch (c.at) {
    case 'users':
    case 'done':
      return c.at;
    case 'project':
    case 'links':
    case 'events':
    case 'signals':
    case 'tombstones':
      return `${c.at}.${c.after}`;
    default:
      return `${c.at}.${c.project}.${c.after}`;
  }
}

/** The cursor a token names (`start`: the beginning); anything else is 400 invalid_cursor. */
export function parseCursorToken(token: string): ExportCursor {
  if (token === 'start' || token === 'users') return exportStart();
  if (token === 'done') return { at: 'done' };
  const p = /^(project|links|events|signals|tombstones)\.(\d{1,15})$/.exec(token);
  if (p) return { at: p[1] as 'project' | HistoryStage, after: Number(p[2]) };
  const s = STAGE.exec(token);
  if (s) return { at: s[1] as 'sessions', project: Number(s[2]), after: Number(s[3]) };
  throw new AppError(
    400,
    'invalid_cursor',
    'The export cursor is not one this server gave out; start again without one (cursor=start).',
  );
}

/**
 * The NDJSON stream of one response from `cursor`: pages while the invocation's subrequests (counted by the meter,
 * the request's own D1 statements and calls included) leave room for one more page within `statements`, and the
 * bytes within RESPONSE_BYTES.
 * Written by a pump started here, inside the request's invocation, so its statements count against it.
 */
export function resumableExport(
  pager: Promise<ExportPager>,
  cursor: ExportCursor,
  statements: number,
): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const enc = new TextEncoder();
  const line = (v: unknown) => enc.encode(`${JSON.stringify(v)}\n`);
  const pump = async () => {
    const p = await pager;
    let c = cursor;
    let bytes = 0;
    let pages = 0;
    const used = () => {
      const u = currentUsage();
      return u ? spent(u) : 0;
    };
    const room = () => used() + PAGE_STATEMENTS <= statements && bytes < RESPONSE_BYTES;
    while (c.at !== 'done' && (pages === 0 || room())) {
      const page = await p.page(c);
      pages++;
      // A cursor line at least every CURSOR_BYTES inside a page too, where the page can be cut (`resume`).
      let text = '';
      let since = 0;
      for (const [i, r] of page.records.entries()) {
        const rec = `${JSON.stringify(r)}\n`;
        text += rec;
        since += rec.length;
        const at = page.resume[i];
        if (since >= CURSOR_BYTES && at && i < page.records.length - 1) {
          text += `${JSON.stringify({ kind: 'cursor', next: cursorToken(at) })}\n`;
          since = 0;
        }
      }
      c = page.next;
      const mark = c.at === 'done' ? { kind: 'end' } : { kind: 'cursor', next: cursorToken(c) };
      const chunk = enc.encode(`${text}${JSON.stringify(mark)}\n`);
      bytes += chunk.byteLength;
      await writer.write(chunk);
    }
    if (pages === 0) await writer.write(line({ kind: 'end' }));
    await writer.close();
  };
  pump().catch(async (err: unknown) => {
    await writer.abort(err).catch(() => undefined);
  });
  return readable;
}
