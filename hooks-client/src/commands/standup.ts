// `cairn standup [--since 1d] [--team] [--project KEY] [--json]`: what I (or the team) did in a window, from the
// memory's summaries and observations, grouped by project and person, with ids (GET /api/standup).
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import { localTimeZone } from '../hook/recall';
import type { Io } from '../io';
import { call, errorText, Unreachable } from '../net/http';
import { jsonText } from '../util/terminal';

const USAGE = `usage: cairn standup [--since 1d|12h|2w|YYYY-MM-DD] [--team] [--project <key>] [--json]
`;

export async function standup(args: string[], io: Io): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        since: { type: 'string' },
        team: { type: 'boolean' },
        project: { type: 'string' },
        json: { type: 'boolean' },
      },
    }));
  } catch {
    io.err(USAGE);
    return 2;
  }
  const config = loggedInConfig(io, pathsFor(io.env));
  if (!config) return 1;
  const q = new URLSearchParams({
    since: values.since ?? '1d',
    tz: localTimeZone(),
    format: values.json ? 'json' : 'text',
  });
  if (values.team) q.set('team', '1');
  if (values.project) q.set('project', values.project);
  try {
    const r = await call(config.url, `/api/standup?${q.toString()}`, {
      token: config.token,
      device: config.device,
      timeoutMs: 30_000,
      maxBytes: 4_000_000,
    });
    if (r.status !== 200) {
      io.err(`cairn: standup failed: ${errorText(r)}\n`);
      return 1;
    }
    let text = r.text;
    if (values.json) {
      try {
        text = jsonText(JSON.parse(r.text) as unknown, 2);
      } catch {
        // not JSON after all: printed as it came (the terminal filter still applies)
      }
    }
    io.out(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  } catch (e) {
    io.err(`cairn: server not reachable (${e instanceof Unreachable ? e.reason : String(e)})\n`);
    return 1;
  }
}
