// `cairn forget`: delete a record, a session or a whole project from the team's memory (POST /api/forget).
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import type { WireJob } from '#shared/jobs';
import { followJob } from '../net/follow-job';
import { call, errorText, Unreachable } from '../net/http';

const USAGE = `usage: cairn forget <12 | S12 | P12>          an observation, a summary or a prompt, as search shows it
       cairn forget --session <session id>      everything one session remembered
       cairn forget --project <key> [--confirm N]   a whole project (admins); run it once to see N
`;

type Body =
  | { kind: 'observation' | 'summary' | 'prompt'; id: number }
  | { kind: 'session'; session_id: string }
  | { kind: 'project'; project: string; confirm?: number };

/** `12`, `#12`, `S12`, `P12` → the request body; null for anything else. */
export function recordBody(ref: string): Body | null {
  const m = /^(#|o|s|p)?(\d{1,15})$/i.exec(ref.trim());
  if (!m) return null;
  const tag = (m[1] ?? '').toLowerCase();
  return { kind: tag === 's' ? 'summary' : tag === 'p' ? 'prompt' : 'observation', id: Number(m[2]) };
}

function bodyFrom(args: string[]): Body | string {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { session: { type: 'string' }, project: { type: 'string' }, confirm: { type: 'string' } },
  });
  const given = [positionals.length > 0, values.session !== undefined, values.project !== undefined].filter(
    Boolean,
  ).length;
  if (given !== 1 || positionals.length > 1) return USAGE;
  if (values.session !== undefined) return { kind: 'session', session_id: values.session };
  if (values.project !== undefined) {
    if (values.confirm !== undefined && !/^\d+$/.test(values.confirm))
      return '--confirm takes the number the first run printed\n';
    return values.confirm === undefined
      ? { kind: 'project', project: values.project }
      : { kind: 'project', project: values.project, confirm: Number(values.confirm) };
  }
  return recordBody(positionals[0]!) ?? `not a record id: ${positionals[0]} (use 12, S12 or P12)\n`;
}

export async function forget(args: string[], io: Io): Promise<number> {
  const body = bodyFrom(args);
  if (typeof body === 'string') {
    io.err(body);
    return 2;
  }
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  try {
    const r = await call(config.url, '/api/forget', {
      token: config.token,
      device: config.device,
      body,
      timeoutMs: 60_000,
    });
    if (r.status === 200) {
      const done = JSON.parse(r.text) as { forgotten: string; counts: Record<string, number> };
      const counts = Object.entries(done.counts)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`);
      io.out(
        `cairn: forgot ${done.forgotten}${counts.length ? ` (${counts.join(', ')})` : ''}; its text is deleted from every index.\n`,
      );
      return 0;
    }
    if (r.status === 202) {
      // A project is deleted by a job on the server: followed here with a progress bar.
      const started = JSON.parse(r.text) as { forgotten: string; job: WireJob };
      io.err(`cairn: forgetting ${started.forgotten} (job ${started.job.id})\n`);
      const job = await followJob(started.job, io, { url: config.url, token: config.token, device: config.device });
      if (job.status === 'failed') {
        io.err(`cairn: forget failed: ${job.error?.message ?? 'the job failed'}\n`);
        return 1;
      }
      io.out(
        `cairn: forgot ${started.forgotten} (${job.progress.done} records); its text leaves the search index within one upkeep cycle.\n`,
      );
      return 0;
    }
    if (r.status === 409 && body.kind === 'project') {
      const told = errorText(r);
      const total = /"confirm": (\d+)/.exec(told)?.[1];
      io.err(`cairn: ${told}\n`);
      if (total) io.err(`cairn: to go ahead: cairn forget --project ${body.project} --confirm ${total}\n`);
      return 1;
    }
    io.err(`cairn: forget failed: ${errorText(r)}\n`);
    return 1;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}
