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

/** Times one part is sent when the server asks to wait (429 or 503 with Retry-After) or cannot be reached. */
const MAX_TRIES = 8;
/** The longest wait before sending a part again, whatever Retry-After says. */
const MAX_WAIT_MS = 65_000;
/** Share of the token's per-minute read limit an import leaves for the agent's own calls (context, search). */
const READ_RESERVE = 0.25;
/** Between polls of a part's job (only on servers that answer 202: Workers Free): one a second, well inside the
 * read limit (120 a minute by default), with the part requests beside them. */
const POLL_MS = 1_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PartAnswer {
  status: number;
  text: string;
  headers: Headers;
}

/** The wait a refusal asks for (Retry-After in seconds), if it is one to wait out: 429, 503. */
function retryWait(r: PartAnswer, tries: number): number | null {
  if (r.status !== 429 && r.status !== 503) return null;
  const after = Number(r.headers.get('retry-after'));
  return Math.min(MAX_WAIT_MS, Number.isFinite(after) && after > 0 ? after * 1000 : 1000 * 2 ** tries);
}

/**
 * How long to pause before the next part so that the import leaves READ_RESERVE of the token's read limit to the
 * rest of the minute (the server counts in fixed one-minute windows, on its clock: rate-limit headers).
 */
export function paceMs(headers: Headers, now: number): number {
  const limit = Number(headers.get('x-ratelimit-limit'));
  const remaining = Number(headers.get('x-ratelimit-remaining'));
  if (!Number.isFinite(limit) || limit <= 0 || !Number.isFinite(remaining)) return 0;
  if (remaining > Math.floor(limit * READ_RESERVE)) return 0;
  return 60_000 - (now % 60_000) + 500;
}

/** POSTs one part, sending it again while the server asks to wait (bounded); the last answer, or throws. */
async function postPart(
  part: string[],
  config: { url: string; token: string; device: string | null },
  io: Io,
): Promise<PartAnswer> {
  for (let tries = 1; ; tries++) {
    let r: PartAnswer;
    try {
      const res = await fetch(new URL('/api/admin/import', `${config.url}/`), {
        method: 'POST',
        headers: { ...authHeaders(config), 'content-type': 'application/x-ndjson' },
        body: `${part.join('\n')}\n`,
        signal: AbortSignal.timeout(120_000),
      });
      r = { status: res.status, text: await res.text(), headers: res.headers };
    } catch (e) {
      // Not reached (or cut off mid-answer): the part may be stored in part; sending it again adds only the rest.
      if (tries >= 3) throw e;
      await sleep(1_000 * 2 ** tries);
      continue;
    }
    const wait = retryWait(r, tries);
    if (wait === null || tries >= MAX_TRIES) return r;
    io.err(
      `${io.isTty ? '\n' : ''}cairn: the server asks to wait ${Math.ceil(wait / 1000)} s (${errorText({ ...r, headers: {} })}); sending the same part again\n`,
    );
    await sleep(wait);
  }
}

/** Sends NDJSON parts to POST /api/admin/import in order with a progress bar; the new rows by kind, or null
 * after printing why it stopped (the server import is idempotent, so running the command again is safe). A part
 * the server stores in the request (200) is followed at once by the next; one it leaves to a job (202) is followed
 * to the job's end first (the next part's rows may name its sessions). Nobody waits for embedding: the server's
 * embed job gives the new rows their vectors after the import. */
export async function sendParts(
  parts: string[][],
  config: { url: string; token: string; device: string | null },
  io: Io,
): Promise<Record<string, number> | null> {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const added: Record<string, number> = {};
  let embedJob: string | null = null;
  let done = 0;
  for (const part of parts) {
    try {
      const r = await postPart(part, config, io);
      if (r.status !== 200 && r.status !== 202) {
        io.err(`\ncairn: import stopped after ${done} of ${total} records: ${errorText({ ...r, headers: {} })}\n`);
        return null;
      }
      let body = JSON.parse(r.text) as { imported?: Record<string, number>; job?: WireJob; embed_job?: string };
      if (body.embed_job) embedJob = body.embed_job;
      if (r.status === 202 && body.job) {
        const before = done;
        const job = await followJob(body.job, io, {
          url: config.url,
          token: config.token,
          device: config.device,
          pollMs: POLL_MS,
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
      done += part.length;
      io.err(`${io.isTty ? '\r' : ''}cairn: ${progressBar(done, total)}${io.isTty ? '' : '\n'}`);
      const pause = done < total ? paceMs(r.headers, io.now()) : 0;
      if (pause > 0) {
        io.err(
          `${io.isTty ? '\n' : ''}cairn: pausing ${Math.ceil(pause / 1000)} s to leave this token's read limit to its sessions\n`,
        );
        await sleep(pause);
      }
    } catch (e) {
      io.err(
        `\ncairn: server not reachable after ${done} of ${total} records (${String(e)}); running the same command again is safe\n`,
      );
      return null;
    }
  }
  if (embedJob)
    io.err(
      `${io.isTty ? '\n' : ''}cairn: keyword search finds the new records now; their vectors follow in the background (job ${embedJob})\n`,
    );
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
