// `cairn remember [--personal] "…"`: a note into this project's memory, or into the user's own (personal) memory,
// which follows them into every project on every device and nobody else sees (POST /api/memory/remember). And
// `cairn export --personal`: the user's own memory as NDJSON (GET /api/memory/personal/export).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { redact } from '#shared/redact';
import { stripMemoryTags } from '#shared/tags';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { projectKeyFor } from '../project/project-key';

const USAGE = `usage: cairn remember [--personal | --project <key>] "what to remember"
       --personal: your own memory (a preference, a rule of yours): in your sessions in every project, nobody else's
`;

/** Text as it may leave the machine: memory tags stripped, secrets redacted (the server does both again). */
const outgoing = (text: string): string => redact(stripMemoryTags(text)).trim();

export async function remember(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { personal: { type: 'boolean' }, project: { type: 'string' } },
  });
  const text = outgoing(positionals.join(' '));
  if (!text || (values.personal && values.project !== undefined)) {
    io.err(USAGE);
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  const body = values.personal
    ? { scope: 'personal', text }
    : { scope: 'project', project: values.project ?? projectKeyFor(io.cwd, paths.stateDir, io.now()), text };
  try {
    const r = await call(config.url, '/api/memory/remember', {
      token: config.token,
      device: config.device,
      body,
      timeoutMs: 30_000,
    });
    if (r.status !== 200 && r.status !== 201) {
      io.err(`cairn: ${errorText(r)}\n`);
      return 1;
    }
    const saved = JSON.parse(r.text) as { id: number; project: string | null; duplicate: boolean };
    const where = values.personal ? 'your personal memory (every project, only you)' : (saved.project ?? '');
    io.out(`cairn: ${saved.duplicate ? 'already remembered' : 'remembered'} as #${saved.id} in ${where}\n`);
    return 0;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}

/** `cairn export --personal --output <file>`: one request (a person's notes are few), written 0600. */
export async function exportPersonal(output: string, io: Io): Promise<number> {
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  try {
    const r = await call(config.url, '/api/memory/personal/export', {
      token: config.token,
      device: config.device,
      timeoutMs: 60_000,
      maxBytes: 64_000_000,
    });
    if (r.status !== 200) {
      io.err(`cairn: export failed: ${errorText(r)}\n`);
      return 1;
    }
    writeFileSync(output, r.text, { mode: 0o600 });
    const records = r.text.split('\n').filter(Boolean).length;
    io.err(`cairn: exported ${records.toLocaleString('en')} records of your personal memory to ${output}\n`);
    return 0;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}
