// Structured log lines (src/lib/log.ts): one object with level and event, the request's id and team once known,
// and error messages without the statement's bound values a database driver appends.
import { describe, expect, it } from 'vitest';
import { errorText, logLine, runWithRequestLog } from '../../../src/lib/log';

describe('structured logs', () => {
  it('carries the request id, and the team id once the token was checked, on every line written inside the request', () => {
    let team: number | null = null;
    const lines = runWithRequestLog({ requestId: 'ray-1', teamId: () => team }, () => {
      const before = logLine('warn', 'rate limiter unavailable', { message: 'down' });
      team = 42;
      return [before, logLine('error', 'batch event failed', { event_id: 'e1', skipped: undefined })];
    });
    expect(lines).toEqual([
      { level: 'warn', event: 'rate limiter unavailable', request_id: 'ray-1', message: 'down' },
      { level: 'error', event: 'batch event failed', request_id: 'ray-1', team_id: 42, event_id: 'e1' },
    ]);
    expect(logLine('info', 'maintenance', { job: 'retention' })).toEqual({
      level: 'info',
      event: 'maintenance',
      job: 'retention',
    });
  });

  it('drops what a failed statement bound (a prompt, an observation) from the message it logs', () => {
    const failed = new Error(
      'Failed query: insert into "prompts" ("text") values (?)\nparams: my password is hunter2 and the plan is secret',
    );
    expect(errorText(failed)).toBe('Failed query: insert into "prompts" ("text") values (?)');
    expect(errorText('x'.repeat(1_000))).toHaveLength(300);
  });
});
