// `cairn why [SESSION]`: which memories went into an agent session and how each stood against the code when it was
// sent (GET /api/receipts): the session's receipts. SESSION is the agent's session id (as `cairn pause --session`
// takes it); without one, the session this device started last in this checkout's project.
import { parseArgs } from 'node:util';
import type { WireReceipt, WireReceipts } from '#shared/wire/receipts';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { projectKeyFor } from '../project/project-key';
import { jsonText } from '../util/terminal';

const USAGE = `usage: cairn why [SESSION] [--json]
       the memories that went into an agent session (default: the latest in this checkout) and their evidence
`;

const day = (iso: string) => iso.slice(0, 16).replace('T', ' ');

/** One memory: `#12  index, mcp  changed (code_changed)  Title  (@ada, 2026-11-30 10:02) fetched`. */
export function receiptLine(m: WireReceipt): string {
  const reasons =
    m.evidence.value === 'current' || !m.evidence.reasons.length ? '' : ` (${m.evidence.reasons.join(', ')})`;
  const title = (m.title ?? '(untitled)').replace(/\s+/g, ' ').trim().slice(0, 120);
  const fetched = m.fetched_at ? '  fetched' : '';
  return `#${m.id}  ${m.channels.join(', ')}  ${m.evidence.value}${reasons}  ${title}  (@${m.author}, ${day(m.created_at)})${fetched}`;
}

/** The whole answer as a person reads it. */
export function renderReceipts(r: WireReceipts): string {
  if (!r.session) return 'cairn why: no session of this device has asked for memory here yet.\n';
  const head = `cairn why: session ${r.session}${r.project ? ` (${r.project})` : ''}${r.started_at ? `, started ${day(r.started_at)} UTC` : ''}`;
  const counts = `${r.used} ${r.used === 1 ? 'memory' : 'memories'} used, ${r.stale} stale (code changed or gone when sent)`;
  const lines = r.memories.map(receiptLine);
  return `${[head, counts, ...lines].join('\n')}\n`;
}

export async function why(args: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { session: { type: 'string' }, json: { type: 'boolean' } },
    });
  } catch {
    io.err(USAGE);
    return 2;
  }
  const { values, positionals } = parsed;
  const session = (values.session ?? positionals[0] ?? '').trim();
  if (positionals.length > 1 || (values.session !== undefined && positionals.length)) {
    io.err(USAGE);
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  const q = new URLSearchParams(session ? { session } : { project: projectKeyFor(io.cwd, paths.stateDir, io.now()) });
  try {
    const r = await call(config.url, `/api/receipts?${q.toString()}`, {
      token: config.token,
      device: config.device,
      timeoutMs: 15_000,
    });
    if (r.status !== 200) {
      io.err(`cairn why: ${errorText(r)}\n`);
      return 1;
    }
    const body = JSON.parse(r.text) as WireReceipts;
    io.out(values.json ? `${jsonText(body, 2)}\n` : renderReceipts(body));
    return 0;
  } catch (e) {
    io.err(`cairn why: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}
