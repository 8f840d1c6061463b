// Structured logs: one JSON object a line, `{level, event, request_id?, team_id?, …fields}`, which Workers Logs
// indexes field by field (wrangler.toml [observability]). Inside a request the request and team ids are added by
// themselves (`withRequestLog` in src/app.ts keeps the request in an AsyncLocalStorage). Fields are counts, ids,
// codes and error messages: never memory text. Error messages go through `errorText`, which drops what database
// drivers append after the statement (`params: …`, the bound values, which can be a user's prompt).
import { AsyncLocalStorage } from 'node:async_hooks';

export type LogValue = string | number | boolean | null | undefined | readonly (string | number)[];
export type LogFields = Record<string, LogValue>;
type Level = 'info' | 'warn' | 'error';

/** What a request knows about itself; `teamId` is read when a line is written (auth runs after the first middleware). */
export interface RequestLogContext {
  requestId: string;
  teamId: () => number | null;
}

const requests = new AsyncLocalStorage<RequestLogContext>();

export function runWithRequestLog<T>(ctx: RequestLogContext, fn: () => T): T {
  return requests.run(ctx, fn);
}

/** A message fit for a log line: the statement's bound values dropped, at most 300 characters. */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cut = message.search(/\n\s*params:/i);
  return (cut === -1 ? message : message.slice(0, cut)).slice(0, 300);
}

/** The line as written (exported for tests). */
export function logLine(level: Level, event: string, fields: LogFields = {}): Record<string, LogValue> {
  const ctx = requests.getStore();
  const line: Record<string, LogValue> = { level, event };
  if (ctx) {
    line.request_id = ctx.requestId;
    const team = ctx.teamId();
    if (team !== null) line.team_id = team;
  }
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) line[k] = v;
  return line;
}

export function log(level: Level, event: string, fields: LogFields = {}): void {
  const line = logLine(level, event, fields);
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}
