// Pure rendering of the context index: exact layout, day grouping, elided times, summary block, budget.
import { describe, expect, it } from 'vitest';
import { DATA_NOTICE } from '#shared/fence';
import { recallMode } from '../../../src/recall/mode';
import { renderContext, type ContextObservation, type ContextSummary } from '../../../src/recall/render-context';

const I: Record<string, string> = Object.fromEntries(recallMode('code').types.map((t) => [t.id, t.emoji]));

const mode = recallMode('code');
const at = (iso: string) => Date.parse(iso);

const obs = (
  id: number,
  iso: string,
  type: string,
  title: string | null,
  extra: Partial<ContextObservation> = {},
): ContextObservation => ({
  id,
  createdAt: at(iso),
  type,
  title,
  subtitle: null,
  narrative: null,
  facts: '[]',
  discoveryTokens: 0,
  author: 'ana',
  ...extra,
});

const sum = (id: number, iso: string, fields: Partial<ContextSummary> = {}): ContextSummary => ({
  id,
  createdAt: at(iso),
  request: '',
  investigated: '',
  learned: '',
  completed: '',
  nextSteps: '',
  author: 'ana',
  ...fields,
});

describe('renderContext', () => {
  it('renders the exact layout: header, legend, stats, days ascending, elided times, summary block, footer', () => {
    const text = renderContext({
      projects: ['github.com/acme/widgets'],
      observations: [
        obs(103, '2026-08-19T16:02:00Z', 'decision', 'Keep refresh logic server-side', {
          narrative: 'x'.repeat(40),
          discoveryTokens: 20_000,
        }),
        obs(102, '2026-08-19T14:15:30Z', 'bugfix', 'Extended JWT TTL to 24h', { author: 'bo', discoveryTokens: 8_200 }),
        obs(101, '2026-08-19T14:15:00Z', 'discovery', 'Token refresh skips expired tokens', {
          discoveryTokens: 20_000,
        }),
        obs(99, '2026-08-18T09:00:00Z', 'feature', 'Login form posts to /api/session'),
      ],
      summaries: [
        sum(12, '2026-08-19T16:10:00Z', {
          request: 'Fix login token expiry',
          investigated: 'Auth flow and JWT expiry',
          learned: 'Tokens expired after 15 minutes',
          completed: 'TTL raised to 24h',
          nextSteps: '',
          author: 'bo',
        }),
      ],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: at('2026-08-20T09:05:00Z'),
      timeZone: 'UTC',
    });
    expect(text).toBe(
      [
        '<cairn-context>',
        '# cairn memory · github.com/acme/widgets · 2026-08-20 9:05 UTC',
        DATA_NOTICE,
        `Legend: S=session ${I.bugfix}bugfix ${I.feature}feature ${I.discovery}discovery ${I.decision}decision ″=same time @who/device=teammate`,
        'Stats: 4 obs · 1 session · read ~43t · work ~48,200t',
        '## 2026-08-18',
        `99 9:00 ${I.feature} Login form posts to /api/session`,
        '## 2026-08-19',
        `101 14:15 ${I.discovery} Token refresh skips expired tokens`,
        `102 ″ ${I.bugfix} Extended JWT TTL to 24h @bo`,
        `103 16:02 ${I.decision} Keep refresh logic server-side`,
        'S12 16:10 Fix login token expiry @bo',
        ' Investigated: Auth flow and JWT expiry',
        ' Learned: Tokens expired after 15 minutes',
        ' Completed: TTL raised to 24h',
        'Tools: get_observations([ids]) · timeline(anchor=id) · search(query)',
        '</cairn-context>',
      ].join('\n'),
    );
  });

  it("groups by day in the caller's time zone, not in UTC", () => {
    const input = {
      projects: ['p'],
      observations: [
        obs(1, '2026-03-01T23:30:00Z', 'change', 'Late change'),
        obs(2, '2026-03-02T00:30:00Z', 'change', 'Early change'),
      ],
      summaries: [],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: at('2026-03-02T12:00:00Z'),
    };
    const utc = renderContext({ ...input, timeZone: 'UTC' });
    expect(utc).toContain('## 2026-03-01\n1 23:30');
    expect(utc).toContain('## 2026-03-02\n2 0:30');
    const tokyo = renderContext({ ...input, timeZone: 'Asia/Tokyo' });
    expect(tokyo.match(/^## /gm)).toHaveLength(1);
    expect(tokyo).toContain(`## 2026-03-02\n1 8:30 ${I.change} Late change\n2 9:30 ${I.change} Early change`);
  });

  it('names the agent of a session recorded outside Claude Code, and says nothing for Claude Code', () => {
    const text = renderContext({
      projects: ['p'],
      observations: [],
      summaries: [
        sum(7, '2026-03-02T10:00:00Z', { request: 'Pin the clock in tests', platform: 'codex' }),
        sum(6, '2026-03-02T09:00:00Z', { request: 'Refresh snapshots', platform: 'claude-code' }),
      ],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: at('2026-03-02T12:00:00Z'),
      timeZone: 'UTC',
    });
    expect(text).toContain('S7 10:00 Pin the clock in tests [codex]');
    expect(text).toMatch(/S6 9:00 Refresh snapshots$/m);
  });

  it('does not elide a time across a day boundary', () => {
    const text = renderContext({
      projects: ['p'],
      observations: [obs(1, '2026-03-01T10:00:00Z', 'change', 'A'), obs(2, '2026-03-02T10:00:00Z', 'change', 'B')],
      summaries: [],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: 0,
      timeZone: 'UTC',
    });
    expect(text).toContain(`1 10:00 ${I.change} A`);
    expect(text).toContain(`2 10:00 ${I.change} B`);
  });

  it('leaves out the summary block when an observation is newer than the newest summary', () => {
    const text = renderContext({
      projects: ['p'],
      observations: [obs(5, '2026-03-01T12:00:00Z', 'change', 'After the summary')],
      summaries: [sum(3, '2026-03-01T11:00:00Z', { request: 'Earlier work', learned: 'Something' })],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: 0,
      timeZone: 'UTC',
    });
    expect(text).toContain('S3 11:00 Earlier work');
    expect(text).not.toContain('Learned:');
  });

  it('shows the newest rows in full when asked, with their narrative', () => {
    const text = renderContext({
      projects: ['p'],
      observations: [
        obs(1, '2026-03-01T10:00:00Z', 'change', 'Old one', { narrative: 'old narrative' }),
        obs(2, '2026-03-01T11:00:00Z', 'bugfix', 'New one', { narrative: 'The cache key ignored the locale.' }),
      ],
      summaries: [],
      mode,
      viewer: 'ana',
      fullCount: 1,
      now: 0,
      timeZone: 'UTC',
    });
    expect(text).toContain(`**2** 11:00 ${I.bugfix} **New one**\n The cache key ignored the locale.`);
    expect(text).toContain(`1 10:00 ${I.change} Old one`);
    expect(text).not.toContain('old narrative');
  });

  it('names untitled rows and unknown types instead of printing nothing', () => {
    const text = renderContext({
      projects: ['p'],
      observations: [obs(1, '2026-03-01T10:00:00Z', 'retired-type', null)],
      summaries: [sum(2, '2026-03-01T10:05:00Z')],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: 0,
      timeZone: 'UTC',
    });
    expect(text).toContain(`1 10:00 📝 Untitled`);
    expect(text).toContain('S2 10:05 session');
  });

  it('welcomes an empty project in a short wrapped text', () => {
    const text = renderContext({
      projects: ['github.com/acme/new'],
      observations: [],
      summaries: [],
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: at('2026-08-20T09:05:00Z'),
      timeZone: 'UTC',
    });
    expect(text.startsWith('<cairn-context>\n# cairn memory · github.com/acme/new')).toBe(true);
    expect(text).toContain('Nothing is stored for this project yet');
    expect(text.endsWith('</cairn-context>')).toBe(true);
    expect(text.split('\n').length).toBeLessThan(7);
  });

  // 1,400 before the trust boundary (1,396 used); the data-not-instructions line costs ~24 tokens, partly paid for by
  // shorter Stats and Tools lines: 1,416 measured.
  it('keeps the default 50 observations and 10 sessions with realistic titles under 1,425 tokens', () => {
    const titles = [
      'Session cookie now set with SameSite=Lax after Safari login loop',
      'Rate limiter counts requests per token instead of per IP address',
      'Migration 0007 adds covering index for observations by project and time',
      'Found that wrangler dev ignores the [vars] block when --env is given',
      'Retry budget for the observer capped at five attempts with jitter',
      'Switched markdown renderer to streaming mode to cut TTFB by 40%',
      'Decided to keep FTS5 external-content tables with triggers',
      'Fixed off-by-one in pagination cursor when the last page is full',
      'User settings form validates time zones against Intl before saving',
      'Flaky e2e test traced to un-awaited fetch in the teardown hook',
    ];
    const base = at('2026-08-10T08:00:00Z');
    // Tool calls come in bursts, so every second observation lands in the same minute as the one before.
    const observations = Array.from({ length: 50 }, (_, i) =>
      obs(
        10_000 + i,
        new Date(base + Math.floor(i / 2) * 41 * 60_000 + (i % 2) * 20_000).toISOString(),
        mode.types[i % 6]!.id,
        titles[i % titles.length]!,
        {
          author: i % 3 === 0 ? 'bartholomew' : 'ana',
          narrative: 'n'.repeat(600),
          discoveryTokens: 3_000,
        },
      ),
    );
    const fields = {
      request: 'Make the login flow survive token expiry without a full page reload',
      investigated: 'How the refresh endpoint and the session cookie interact across tabs and devices',
      learned: 'Refresh tokens were rotated on every call, so parallel tabs invalidated each other',
      completed: 'Rotation now happens at most once per minute; tabs share the new token via storage events',
      nextSteps: 'Watch the error rate of /api/refresh for a day, then remove the old fallback path',
    };
    const summaries = Array.from({ length: 10 }, (_, i) =>
      sum(700 + i, new Date(base + (i * 5 + 2) * 47 * 60_000 + 1).toISOString(), {
        ...fields,
        author: i % 2 ? 'bartholomew' : 'ana',
      }),
    );
    // Newest summary after every observation so the summary block is included too.
    summaries.push(sum(799, new Date(base + 60 * 47 * 60_000).toISOString(), { ...fields, author: 'bartholomew' }));
    const text = renderContext({
      projects: ['github.com/acme/widgets'],
      observations,
      summaries: summaries.slice(1),
      mode,
      viewer: 'ana',
      fullCount: 0,
      now: base + 61 * 47 * 60_000,
      timeZone: 'Europe/Berlin',
    });
    expect(text).toMatch(/^S799 .*\n Investigated: .*\n Learned: .*\n Completed: .*\n Next: /m);
    expect(text.split('\n').filter((l) => /^\d+ /.test(l))).toHaveLength(50);
    expect(text.split('\n').filter((l) => /^S\d+ /.test(l))).toHaveLength(10);
    // Characters are code points: an emoji icon is one character, as a reader (and a tokenizer) sees it.
    const chars = [...text].length;
    const tokens = Math.ceil(chars / 4);
    console.log(
      `context budget: ${chars} chars (${text.length} UTF-16 units) ≈ ${tokens} tokens for 50 observations + 10 sessions`,
    );
    expect(tokens).toBeLessThan(1425);
  });
});
