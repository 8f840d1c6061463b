// `cairn supersede` and `cairn feedback`: correct the team's memory (POST /api/corrections/…).
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';

const SUPERSEDE_USAGE = `usage: cairn supersede <12> [--by <13>] --reason "why it is no longer true"
       marks observation #12 outdated (replaced by #13 when given); its author or a team admin may
`;
const FEEDBACK_USAGE = `usage: cairn feedback <12> wrong|outdated|useful [--reason "…"]
`;

/** `12` or `#12` → 12; null for anything else. */
export function observationId(ref: string | undefined): number | null {
  const m = /^#?(\d{1,15})$/.exec((ref ?? '').trim());
  return m ? Number(m[1]) : null;
}

async function post(
  io: Io,
  path: string,
  body: Record<string, unknown>,
  done: (r: Record<string, unknown>) => string,
): Promise<number> {
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  try {
    const r = await call(config.url, path, { token: config.token, device: config.device, body, timeoutMs: 30_000 });
    if (r.status === 200) {
      io.out(`cairn: ${done(JSON.parse(r.text) as Record<string, unknown>)}\n`);
      return 0;
    }
    io.err(`cairn: ${errorText(r)}\n`);
    return 1;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}

export async function supersede(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: { by: { type: 'string' }, reason: { type: 'string' } },
  });
  const id = observationId(positionals[0]);
  const by = values.by === undefined ? null : observationId(String(values.by));
  const reason = typeof values.reason === 'string' ? values.reason.trim() : '';
  if (id === null || positionals.length !== 1 || (values.by !== undefined && by === null) || !reason) {
    io.err(SUPERSEDE_USAGE);
    return 2;
  }
  return post(io, '/api/corrections/supersede', { id, ...(by === null ? {} : { by }), reason }, (r) =>
    r.by == null
      ? `#${id} is marked outdated; it left the context index.`
      : `#${id} is superseded by #${String(r.by)}; it left the context index.`,
  );
}

export async function feedback(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: { reason: { type: 'string' } },
  });
  const id = observationId(positionals[0]);
  const kind = positionals[1];
  if (id === null || positionals.length !== 2 || !['wrong', 'outdated', 'useful'].includes(kind ?? '')) {
    io.err(FEEDBACK_USAGE);
    return 2;
  }
  const reason = typeof values.reason === 'string' && values.reason.trim() ? { reason: values.reason.trim() } : {};
  return post(io, '/api/corrections/feedback', { id, kind, ...reason }, (r) =>
    r.counted === false
      ? `you already said #${id} is ${kind}.`
      : kind === 'useful'
        ? `noted: #${id} was useful.`
        : `#${id} is flagged ${kind}; it is out of the context index until an admin reviews it.`,
  );
}
