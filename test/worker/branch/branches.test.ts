// Pure: judging rows against the caller's checkout, and what the marks cost the index's token budget.
import { describe, expect, it } from 'vitest';
import type { GitView } from '#shared/git';
import { judgeRows, preferMerged, type BranchedRow } from '../../../src/evidence/branches';
import { recallMode } from '../../../src/recall/mode';
import { renderContext, type ContextObservation, type ContextSummary } from '../../../src/recall/render-context';

const sha = (c: string) => c.repeat(40).slice(0, 40);
const view: GitView = {
  branch: 'feature-y',
  head: sha('4'),
  trunk: 'main',
  history: [sha('4'), sha('1')].map((c) => c.slice(0, 12)),
};
const row = (id: number, gitBranch: string | null, gitCommit: string | null): BranchedRow => ({
  id,
  createdAt: id * 1000,
  gitBranch,
  gitCommit,
});

describe('judging rows by branch', () => {
  it('judges a detached commit by the history alone and labels it by its first 7 digits', () => {
    const inside = row(1, null, sha('1'));
    const outside = row(2, null, sha('9'));
    const j = judgeRows([inside, outside], view);
    expect(j.get(inside)).toEqual({ lineage: 'merged', label: null });
    expect(j.get(outside)).toEqual({ lineage: 'unmerged', label: '9999999' });
  });

  it('never calls the trunk’s rows unmerged, even when the trunk moved on since the client fetched', () => {
    const trunk = row(1, 'main', sha('8'));
    expect(judgeRows([trunk], view).get(trunk)?.lineage).toBe('merged');
  });

  it('counts the current branch as here whatever its commit, and a branch without any commit as unknown', () => {
    const mine = row(1, 'feature-y', sha('7'));
    const bare = row(2, 'wip', null);
    const j = judgeRows([mine, bare], view);
    expect(j.get(mine)?.lineage).toBe('here');
    expect(j.get(bare)?.lineage).toBe('unknown');
  });

  it('judges nothing without a view, and keeps the newest rows in order', () => {
    const rows = [row(1, 'x', sha('9')), row(3, null, null), row(2, 'y', sha('8'))];
    expect(preferMerged(rows, null, 2).map((r) => [r.id, r.branchMark])).toEqual([
      [3, null],
      [2, null],
    ]);
  });
});

describe('the index budget with branch marks', () => {
  const mode = recallMode('code');
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

  it('keeps 50 observations and 10 sessions, a fifth of them from an unmerged branch, under 1,425 tokens', () => {
    // The fixture of render-context.test.ts's budget test, with rows 40–49 and one session from `spike/cache-warmup`.
    const base = Date.parse('2026-08-10T08:00:00Z');
    const observations: ContextObservation[] = Array.from({ length: 50 }, (_, i) => ({
      id: 10_000 + i,
      createdAt: base + Math.floor(i / 2) * 41 * 60_000 + (i % 2) * 20_000,
      type: mode.types[i % 6]!.id,
      title: titles[i % titles.length]!,
      subtitle: null,
      narrative: 'n'.repeat(600),
      facts: '[]',
      discoveryTokens: 3_000,
      author: i % 3 === 0 ? 'bartholomew' : 'ana',
      branchMark: i >= 40 ? 'spike/cache-warmup' : null,
    }));
    const fields = {
      request: 'Make the login flow survive token expiry without a full page reload',
      investigated: 'How the refresh endpoint and the session cookie interact across tabs and devices',
      learned: 'Refresh tokens were rotated on every call, so parallel tabs invalidated each other',
      completed: 'Rotation now happens at most once per minute; tabs share the new token via storage events',
      nextSteps: 'Watch the error rate of /api/refresh for a day, then remove the old fallback path',
    };
    const summaries: ContextSummary[] = Array.from({ length: 11 }, (_, i) => ({
      id: 700 + i,
      createdAt: i === 10 ? base + 60 * 47 * 60_000 : base + (i * 5 + 2) * 47 * 60_000 + 1,
      ...fields,
      author: i % 2 || i === 10 ? 'bartholomew' : 'ana',
      branchMark: i === 9 ? 'spike/cache-warmup' : null,
    }));
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
    expect(text.split('\n').filter((l) => / ⎇spike\/cache-warmup( @|$)/.test(l))).toHaveLength(11);
    expect(text.split('\n').filter((l) => /^\d+ /.test(l))).toHaveLength(50);
    const tokens = Math.ceil([...text].length / 4);
    console.log(`context budget with branch marks: ${[...text].length} chars ≈ ${tokens} tokens`);
    expect(tokens).toBeLessThan(1425);
  });
});
