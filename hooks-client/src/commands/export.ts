// `cairn export`: the team's memory as NDJSON in a file, read from the server's resumable export
// (GET /api/admin/export?cursor=…, src/transfer/export-resume.ts) in bounded responses. Records reach the file only
// when a cursor line vouches for them; the cursor and the file's length at that point are kept beside the file
// (`<file>.resume`), so a cut connection is resumed at once from there, and a run that was stopped (Ctrl-C, a
// crash) is resumed by running the same command again. The file ends up byte for byte the uninterrupted export.
import {
  closeSync,
  ftruncateSync,
  fstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { errorText } from '../net/http';
import { authHeaders } from './transfer';

/** Attempts in a row that brought no new cursor before the command gives up (running it again resumes). */
const ATTEMPTS = 5;

interface ResumeState {
  server: string;
  project: string | null;
  cursor: string;
  bytes: number;
  records: number;
}

const CURSOR = '{"kind":"cursor",';
const END = '{"kind":"end"}';

function readState(path: string, server: string, project: string | null, fileBytes: number): ResumeState | null {
  try {
    const s = JSON.parse(readFileSync(path, 'utf8')) as Partial<ResumeState>;
    const ok =
      s.server === server &&
      (s.project ?? null) === project &&
      typeof s.cursor === 'string' &&
      typeof s.bytes === 'number' &&
      s.bytes <= fileBytes;
    return ok ? (s as ResumeState) : null;
  } catch {
    return null;
  }
}

function saveState(path: string, s: ResumeState): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
  renameSync(tmp, path);
}

class HttpRefusal extends Error {}

export async function exportNdjson(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { project: { type: 'string' }, output: { type: 'string', short: 'o' }, personal: { type: 'boolean' } },
  });
  if (!values.output || (values.personal && values.project !== undefined)) {
    io.err('usage: cairn export --output <file.ndjson> [--project <key> | --personal]\n');
    return 2;
  }
  // Your own memory: no admin needed, and it is in no team export.
  if (values.personal) return (await import('./remember')).exportPersonal(values.output, io);
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  const output = values.output;
  const project = values.project ?? null;
  const statePath = `${output}.resume`;
  const fd = openSync(output, 'a+', 0o600);
  try {
    const found = readState(statePath, config.url, project, fstatSync(fd).size);
    const state: ResumeState = found ?? { server: config.url, project, cursor: 'start', bytes: 0, records: 0 };
    // What follows the last vouched-for record (a cut line, or an earlier export's file) goes.
    ftruncateSync(fd, state.bytes);
    if (found) io.err(`cairn: resuming the export after ${state.records.toLocaleString('en')} records\n`);
    const pause = Number(io.env.CAIRN_EXPORT_RETRY_MS ?? 1_000);
    let failures = 0;
    while (state.cursor !== 'done') {
      const before = state.cursor;
      try {
        await readResponse(config, project, state, fd, statePath, io);
        failures = 0;
      } catch (e) {
        if (e instanceof HttpRefusal) {
          io.err(`\ncairn: export failed: ${e.message}\n`);
          return 1;
        }
        failures = state.cursor === before ? failures + 1 : 1;
        if (failures >= ATTEMPTS) {
          io.err(
            `\ncairn: export interrupted after ${state.records.toLocaleString('en')} records (${String(e)}); run the same command again to resume\n`,
          );
          return 1;
        }
        await new Promise((r) => setTimeout(r, pause * failures));
      }
    }
    unlinkSync(statePath);
    io.err(`${io.isTty ? '\r' : ''}cairn: exported ${state.records.toLocaleString('en')} records to ${output}\n`);
    return 0;
  } finally {
    closeSync(fd);
  }
}

/** One response from `state.cursor`: records go to the file at each cursor line; `state` moves with them. */
async function readResponse(
  config: { url: string; token: string; device: string | null },
  project: string | null,
  state: ResumeState,
  fd: number,
  statePath: string,
  io: Io,
): Promise<void> {
  const url = new URL('/api/admin/export', `${config.url}/`);
  if (project) url.searchParams.set('project', project);
  url.searchParams.set('cursor', state.cursor);
  const res = await fetch(url, { headers: authHeaders(config) });
  if (res.status !== 200 || !res.body) {
    const r = { status: res.status, text: await res.text() };
    // A server error or a restart may pass; a refusal will not.
    if (res.status >= 400 && res.status < 500 && res.status !== 429)
      throw new HttpRefusal(errorText(r as Parameters<typeof errorText>[0]));
    throw new Error(errorText(r as Parameters<typeof errorText>[0]));
  }
  const decoder = new TextDecoder();
  let tail = '';
  let pending: string[] = [];
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const lines = (tail + decoder.decode(chunk, { stream: true })).split('\n');
    tail = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith(CURSOR) || line === END) {
        const text = Buffer.from(pending.join(''));
        for (let off = 0; off < text.length; ) off += writeSync(fd, text, off, text.length - off, state.bytes + off);
        state.bytes += text.length;
        state.records += pending.length;
        pending = [];
        state.cursor = line === END ? 'done' : (JSON.parse(line) as { next: string }).next;
        saveState(statePath, state);
        if (io.isTty) io.err(`\rcairn: exported ${state.records.toLocaleString('en')} records`);
      } else if (line !== '') pending.push(`${line}\n`);
    }
  }
  if (state.cursor !== 'done' && (pending.length > 0 || tail !== ''))
    throw new Error('the connection ended inside a piece');
}
