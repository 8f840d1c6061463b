// `cairn history`, `cairn edit` and `cairn revert`: a record's versions (GET/POST /api/corrections/…). The history
// and diffs are the server's text (fenced there); like everything a person reads here, printed through the
// terminal filter (run.ts).
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { observationId } from './supersede';

const HISTORY_USAGE = `usage: cairn history <12> [--diff <from>[:<to>]] [--json]
       every version of observation #12 (who, when, why, what changed); --diff 1 shows what changed since version 1
`;
const EDIT_USAGE = `usage: cairn edit <12> [--title "…"] [--subtitle "…"] [--narrative "…"] [--fact "…"]… [--concept c]…
                  [--file path]… [--no-facts] [--no-files] [--reason "why"]
       replaces the fields given (facts, concepts, files: the whole list); its author or a team admin may
`;
const REVERT_USAGE = `usage: cairn revert <12> --to <version> [--reason "why"]
       puts #12 back as it was at that version (a new version; nothing is lost)
`;

async function request(
  io: Io,
  path: string,
  body: Record<string, unknown> | undefined,
  done: (text: string) => string,
): Promise<number> {
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  try {
    const r = await call(config.url, path, { token: config.token, device: config.device, body, timeoutMs: 30_000 });
    if (r.status === 200) {
      io.out(done(r.text));
      return 0;
    }
    io.err(`cairn: ${errorText(r)}\n`);
    return 1;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}

const VERSION_RANGE = /^(\d{1,6})(?::(\d{1,6}))?$/;

export async function history(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: { diff: { type: 'string' }, json: { type: 'boolean' } },
  });
  const id = observationId(positionals[0]);
  const range = values.diff === undefined ? null : VERSION_RANGE.exec(String(values.diff));
  if (id === null || positionals.length !== 1 || (values.diff !== undefined && !range)) {
    io.err(HISTORY_USAGE);
    return 2;
  }
  const format = values.json ? 'json' : 'text';
  const path = range
    ? `/api/corrections/diff?id=${id}&from=${range[1]}${range[2] ? `&to=${range[2]}` : ''}&format=${format}`
    : `/api/corrections/history?id=${id}&format=${format}`;
  return request(io, path, undefined, (text) => (text.endsWith('\n') ? text : `${text}\n`));
}

export async function edit(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: {
      title: { type: 'string' },
      subtitle: { type: 'string' },
      narrative: { type: 'string' },
      fact: { type: 'string', multiple: true },
      concept: { type: 'string', multiple: true },
      file: { type: 'string', multiple: true },
      'no-facts': { type: 'boolean' },
      'no-files': { type: 'boolean' },
      reason: { type: 'string' },
    },
  });
  const id = observationId(positionals[0]);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  const body: Record<string, unknown> = { id };
  for (const f of ['title', 'subtitle', 'narrative', 'reason'] as const) {
    const v = str(values[f]);
    if (v !== undefined) body[f] = v;
  }
  const facts = values['no-facts'] ? [] : list(values.fact);
  const files = values['no-files'] ? [] : list(values.file);
  const concepts = list(values.concept);
  if (facts) body.facts = facts;
  if (files) body.files = files;
  if (concepts) body.concepts = concepts;
  const fields = Object.keys(body).filter((k) => k !== 'id' && k !== 'reason');
  if (id === null || positionals.length !== 1 || fields.length === 0) {
    io.err(EDIT_USAGE);
    return 2;
  }
  return request(io, '/api/corrections/edit', body, (text) => {
    const r = JSON.parse(text) as { version: number; changed: string[] };
    return r.changed.length
      ? `cairn: #${id} edited (${r.changed.join(', ')}); it is version ${r.version} now (cairn history ${id}).\n`
      : `cairn: #${id} already says that; nothing changed.\n`;
  });
}

export async function revert(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: { to: { type: 'string' }, reason: { type: 'string' } },
  });
  const id = observationId(positionals[0]);
  const to = /^\d{1,6}$/.test(String(values.to ?? '')) ? Number(values.to) : null;
  if (id === null || positionals.length !== 1 || to === null || to < 1) {
    io.err(REVERT_USAGE);
    return 2;
  }
  const reason = typeof values.reason === 'string' && values.reason.trim() ? { reason: values.reason.trim() } : {};
  return request(io, '/api/corrections/revert', { id, to, ...reason }, (text) => {
    const r = JSON.parse(text) as { version: number; changed: string[] };
    return r.changed.length
      ? `cairn: #${id} is back to version ${to} (${r.changed.join(', ')}); it is version ${r.version} now.\n`
      : `cairn: #${id} is already as it was at version ${to}.\n`;
  });
}
