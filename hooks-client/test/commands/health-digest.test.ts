// `cairn admin health`'s digest line (issue 36), from the server's answer: a failing receiver reads as failing, with
// since when, its period and attempts and the error; a working one as when it last went out; none without a webhook.
import { describe, expect, it } from 'vitest';
import { renderTeamHealth } from '../../src/commands/health';

const AT = Date.parse('2026-12-04T06:00:00Z');

describe("admin health's digest line", () => {
  it('says a failing digest is failing, since when, and why', () => {
    const text = renderTeamHealth({
      team: 'acme',
      digest: {
        schedule: 'daily',
        period: '2026-12-04',
        attempts: 3,
        last_sent_at: AT - 86_400_000,
        failing_since: AT,
        error: 'the webhook answered 500',
      },
    });
    expect(text).toContain(
      'digest: daily, FAILING since 2026-12-04 06:00 UTC (2026-12-04, 3 attempts): the webhook answered 500; last sent 2026-12-03 06:00 UTC',
    );
  });

  it('says when a working digest last went out, and nothing without a webhook', () => {
    const ok = {
      schedule: 'weekly',
      period: '2026-W49',
      attempts: 1,
      last_sent_at: AT,
      failing_since: null,
      error: null,
    };
    expect(renderTeamHealth({ team: 'acme', digest: ok })).toContain('digest: weekly, last sent 2026-12-04 06:00 UTC');
    expect(renderTeamHealth({ team: 'acme', digest: null })).not.toContain('digest');
  });
});
