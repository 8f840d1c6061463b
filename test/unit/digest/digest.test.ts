// The team's day, pure parts (issue 36): where a digest may be posted, its periods, the standup window, and the Slack
// message's escaping.
import { describe, expect, it } from 'vitest';
import { digestPeriod } from '../../../src/digest/schedule';
import { groupDay, renderSlackDigest, slackEscape } from '../../../src/digest/render';
import { MAX_WINDOW_MS, parseSince } from '../../../src/digest/standup';
import { maskedWebhook, webhookRefusal } from '../../../src/digest/webhook';

describe('the webhook', () => {
  it('is https in production; loopback http only in local runs; never with credentials in it', () => {
    expect(webhookRefusal('https://hooks.slack.com/services/T/B/x', false)).toBeNull();
    expect(webhookRefusal('http://127.0.0.1:9999/hook', true)).toBeNull();
    expect(webhookRefusal('http://[::1]:9999/hook', true)).toBeNull();
    expect(webhookRefusal('http://127.0.0.1:9999/hook', false)).toBe('use an https:// URL');
    expect(webhookRefusal('https://localhost/hook', false)).toBe('loopback is for local runs only');
    expect(webhookRefusal('http://hooks.example.com/x', true)).not.toBeNull();
    expect(webhookRefusal('https://a:b@hooks.example.com/x', false)).not.toBeNull();
    expect(webhookRefusal('javascript:alert(1)', true)).not.toBeNull();
    expect(maskedWebhook('https://hooks.slack.com/services/T/B/secret')).toBe('https://hooks.slack.com/…');
  });
});

describe('periods and windows', () => {
  it('names a daily digest by its UTC day and a weekly one by its ISO week', () => {
    expect(digestPeriod('daily', Date.parse('2026-12-04T23:59:00Z'))).toBe('2026-12-04');
    expect(digestPeriod('weekly', Date.parse('2026-12-07T03:17:00Z'))).toBe('2026-W50');
    expect(digestPeriod('weekly', Date.parse('2021-01-03T12:00:00Z'))).toBe('2020-W53');
    expect(digestPeriod('weekly', Date.parse('2024-12-30T12:00:00Z'))).toBe('2025-W01');
  });

  it('reads 12h, 1d, 2w and ISO dates, at most 31 days back', () => {
    const now = Date.parse('2026-12-04T12:00:00Z');
    expect(parseSince('12h', now)).toBe(now - 12 * 3_600_000);
    expect(parseSince('1d', now)).toBe(now - 86_400_000);
    expect(parseSince('2026-12-01', now)).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(parseSince('400d', now)).toBe(now - MAX_WINDOW_MS);
    for (const bad of ['', 'yesterday', '0d', '1y', '2027-01-01', '2026-13-45', '1d; drop'])
      expect(parseSince(bad, now)).toBeNull();
  });
});

describe('the Slack message', () => {
  it("escapes Slack's control characters so no row can ping a channel, link or break out", () => {
    expect(slackEscape('a < b & <!here> <https://x|y>')).toBe('a &lt; b &amp; &lt;!here&gt; &lt;https://x|y&gt;');
    const groups = groupDay({
      summaries: [],
      observations: [
        {
          id: 1,
          createdAt: 1,
          type: 'bugfix',
          title: 'Fix <!channel> & <@U123> <https://evil|click>',
          author: 'ana',
          project: 'p',
        },
      ],
      more: false,
    });
    const msg = JSON.stringify(
      renderSlackDigest(groups, { who: 'acme', from: 0, until: 1, timeZone: 'UTC', more: false }),
    );
    for (const never of ['<!channel>', '<@U123>', '<https://evil|click>']) expect(msg).not.toContain(never);
    expect(msg).toContain('#1 bugfix: Fix');
  });
});
