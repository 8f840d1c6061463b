// `cairn import --ndjson` (`cairn export` is export.ts): a team's memory back in from NDJSON,
// sent in parts the server accepts (≤ 1 MB, ≤ 250 records each), each part's import job followed to its end, with
// a progress bar on stderr.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { followJob } from '../net/follow-job';
import { errorText } from '../net/http';
import type { WireJob } from '#shared/jobs';

const PART_BYTES = 900_000;
const PART_LINES = 250;

export const authHeaders = (c: { token: string; device: string | null }): Record<string, string> => ({
  authorization: `Bearer ${c.token}`,
  'user-agent': 'cairn-client',
  ...(c.device ? { 'x-cairn-device': c.device } : {}),
});

/** A one-line bar: `[#####-----] 50% 1,000/2,000 records`. Pure, for tests. */
export function progressBar(done: number, total: number, width = 30): string {
  const share = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(share * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.round(share * 100)}% ${done.toLocaleString('en')}/${total.toLocaleString('en')} records`;
}

/** Cuts an NDJSON file into parts by line count and size, never inside a line. Linear in the text. */
export function ndjsonParts(text: string, maxLines = PART_LINES, maxBytes = PART_BYTES): string[][] {
  const parts: string[][] = [];
  let part: string[] = [];
  let bytes = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const size = Buffer.byteLength(line) + 1;
    if (part.length && (part.length >= maxLines || bytes + size > maxBytes)) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(line);
    bytes += size;
  }
  if (part.length) parts.push(part);
  return parts;
}

/** Sends NDJSON parts to POST /api/admin/import in order with a progress bar; the new rows by kind, or null
 * after printing why it stopped (the server import is idempotent, so running the command again is safe). */
export async function sendParts(
  parts: string[][],
  config: { url: string; token: string; device: string | null },
  io: Io,
): Promise<Record<string, number> | null> {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const added: Record<string, number> = {};
  let done = 0;
  for (const part of parts) {
    try {
      const res = await fetch(new URL('/api/admin/import', `${config.url}/`), {
        method: 'POST',
        headers: { ...authHeaders(config), 'content-type': 'application/x-ndjson' },
        body: `${part.join('\n')}\n`,
        signal: AbortSignal.timeout(120_000),
      });
      const r = { status: res.status, text: await res.text() };
      if (r.status !== 200 && r.status !== 202) {
        io.err(
          `\ncairn: import stopped after ${done} of ${total} records: ${errorText(r as Parameters<typeof errorText>[0])}\n`,
        );
        return null;
      }
      let body = JSON.parse(r.text) as { imported?: Record<string, number>; job?: WireJob };
      // 202: the server stores and embeds the part in a job; follow it to its end before the next part (its
      // sessions may be named by the next part's rows).
      if (r.status === 202 && body.job) {
        const before = done;
        const job = await followJob(body.job, io, {
          url: config.url,
          token: config.token,
          device: config.device,
          pollMs: 300,
          line: (j) =>
            `cairn: ${progressBar(before + (j.progress.phase === 'writing records' ? j.progress.done : part.length), total)}${j.progress.phase ? `  ${j.progress.phase}` : ''}`,
        });
        if (job.status !== 'done') {
          io.err(
            `\ncairn: import stopped after ${done} of ${total} records: ${job.error?.message ?? job.status} (${job.error?.code ?? 'failed'})\n`,
          );
          return null;
        }
        body = job.result as { imported?: Record<string, number> };
      }
      for (const [k, n] of Object.entries(body.imported ?? {})) added[k] = (added[k] ?? 0) + n;
    } catch (e) {
      io.err(
        `\ncairn: server not reachable after ${done} of ${total} records (${String(e)}); running the same command again is safe\n`,
      );
      return null;
    }
    done += part.length;
    io.err(`${io.isTty ? '\r' : ''}cairn: ${progressBar(done, total)}${io.isTty ? '' : '\n'}`);
  }
  return added;
}

export async function importNdjson(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { ndjson: { type: 'string' } } });
  if (!values.ndjson) {
    io.err('usage: cairn import --ndjson <file.ndjson>\n');
    return 2;
  }
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  let text: string;
  try {
    text = readFileSync(values.ndjson, 'utf8');
  } catch (e) {
    io.err(`cairn: cannot read ${values.ndjson}: ${(e as Error).message}\n`);
    return 1;
  }
  const parts = ndjsonParts(text);
  const total = parts.reduce((n, p) => n + p.length, 0);
  const added = await sendParts(parts, config, io);
  if (!added) return 1;
  const summary = Object.entries(added)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  io.out(
    `${io.isTty ? '\n' : ''}cairn: imported ${total} records: new ${summary || 'nothing'} (rows already there were left alone)\n`,
  );
  return 0;
}
