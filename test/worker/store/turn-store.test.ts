// The D1 side of a turn: one batch, content-hash dedupe, file index rows, summaries, CJK terms, prompts.
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import type { ObservationContent } from '#shared/wire/records';
import type { ParsedSummary } from '../../../src/observer/types';
import { defaultAfterStore } from '../../../src/store/after-store';
import { storePrompt } from '../../../src/store/sessions';
import { spreadTokens, storeTurn, type TurnRecord } from '../../../src/store/turn-store';
import { fresh, newIdentity } from '../support/http';
import { idsOf, seedProject, seedSession } from '../support/seed';

async function fixture() {
  const id = await newIdentity();
  const ids = await idsOf(id);
  const projectId = await seedProject(ids, `github.com/acme/${fresh('repo')}`);
  const sessionDbId = await seedSession(ids, projectId, fresh('s'));
  return { ids, projectId, sessionDbId };
}

const observation = (over: Partial<ObservationContent> = {}): ObservationContent => ({
  type: 'bugfix',
  title: 'Fixed token refresh',
  subtitle: null,
  facts: ['Refresh ran twice'],
  narrative: 'The refresh timer was started twice.',
  concepts: ['problem-solution'],
  filesRead: [],
  filesModified: ['src/auth.ts'],
  ...over,
});

const summary = (over: Partial<ParsedSummary> = {}): ParsedSummary => ({
  request: 'Fix login',
  investigated: 'auth flow',
  learned: 'timer ran twice',
  completed: 'fixed it',
  nextSteps: 'none',
  notes: null,
  skipped: false,
  skipReason: null,
  ...over,
});

function record(f: Awaited<ReturnType<typeof fixture>>, over: Partial<TurnRecord> = {}): TurnRecord {
  return {
    context: {
      teamId: f.ids.teamId,
      projectId: f.projectId,
      sessionDbId: f.sessionDbId,
      promptNumber: 3,
      promptId: null,
      authorUserId: f.ids.userId,
      deviceId: f.ids.deviceId,
      agentId: null,
      agentType: null,
    },
    observations: [{ observation: observation(), createdAt: 1_790_000_000_000 }],
    summary: null,
    discoveryTokens: 900,
    generationId: 'gen-1',
    turnKey: null,
    storedAt: Date.now(),
    ...over,
  };
}

describe('storeTurn', () => {
  it('stores observations with their file rows and a summary, and a second write of the same turn adds nothing', async () => {
    const f = await fixture();
    const turn = record(f, {
      observations: [
        { observation: observation(), createdAt: 1_790_000_000_000 },
        {
          observation: observation({
            title: 'Read the config',
            type: 'discovery',
            filesModified: [],
            filesRead: ['config.json', 'config.json'],
          }),
          createdAt: 1_790_000_001_000,
        },
      ],
      summary: { summary: summary(), createdAt: 1_790_000_002_000 },
    });
    const first = await storeTurn(env.DB, turn);
    expect(first.observationIds).toHaveLength(2);
    expect(first.summaryId).toEqual(expect.any(Number));
    expect(first.notices.map((n) => n.kind)).toEqual(['observation', 'observation', 'summary']);
    const again = await storeTurn(env.DB, turn);
    expect(again).toMatchObject({ observationIds: [], duplicates: 2, summaryId: null, notices: [] });

    const rows = await env.DB.prepare(
      'SELECT title, prompt_number, created_at, discovery_tokens, generation_id FROM observations WHERE session_id = ? ORDER BY id',
    )
      .bind(f.sessionDbId)
      .all();
    expect(rows.results).toEqual([
      {
        title: 'Fixed token refresh',
        prompt_number: 3,
        created_at: 1_790_000_000_000,
        discovery_tokens: 450,
        generation_id: 'gen-1',
      },
      {
        title: 'Read the config',
        prompt_number: 3,
        created_at: 1_790_000_001_000,
        discovery_tokens: 450,
        generation_id: 'gen-1',
      },
    ]);
    const files = await env.DB.prepare('SELECT path, kind FROM observation_files WHERE project_id = ? ORDER BY path')
      .bind(f.projectId)
      .all();
    expect(files.results).toEqual([
      { path: 'config.json', kind: 'read' },
      { path: 'src/auth.ts', kind: 'modified' },
    ]);
    const summaries = await env.DB.prepare('SELECT COUNT(*) AS n FROM summaries WHERE session_id = ?')
      .bind(f.sessionDbId)
      .first<{ n: number }>();
    expect(summaries?.n).toBe(1);
  });

  it('indexes an observation touching many files with one statement well under the parameter limit', async () => {
    const f = await fixture();
    const paths = Array.from({ length: 150 }, (_, i) => `src/module-${i}.ts`);
    await storeTurn(
      env.DB,
      record(f, {
        observations: [{ observation: observation({ filesModified: paths, filesRead: paths }), createdAt: 1 }],
      }),
    );
    const n = await env.DB.prepare('SELECT COUNT(*) AS n FROM observation_files WHERE project_id = ?')
      .bind(f.projectId)
      .first<{ n: number }>();
    expect(n?.n).toBe(300);
  });

  it('does not store a skipped or empty summary', async () => {
    const f = await fixture();
    const skipped = await storeTurn(
      env.DB,
      record(f, {
        observations: [],
        summary: { summary: summary({ skipped: true, skipReason: 'nothing new' }), createdAt: 1 },
      }),
    );
    const empty = await storeTurn(
      env.DB,
      record(f, {
        observations: [],
        summary: {
          summary: summary({ request: null, investigated: null, learned: null, completed: ' ', nextSteps: null }),
          createdAt: 1,
        },
      }),
    );
    expect(skipped.summaryId).toBeNull();
    expect(empty.summaryId).toBeNull();
    const n = await env.DB.prepare('SELECT COUNT(*) AS n FROM summaries WHERE session_id = ?')
      .bind(f.sessionDbId)
      .first<{ n: number }>();
    expect(n?.n).toBe(0);
  });

  it('makes a Chinese observation findable by a two-character term', async () => {
    const f = await fixture();
    await storeTurn(
      env.DB,
      record(f, {
        observations: [
          { observation: observation({ title: '修复用户登录问题', narrative: '刷新令牌被调用两次' }), createdAt: 1 },
        ],
      }),
    );
    const hit = await env.DB.prepare(
      `SELECT o.title FROM observations_fts JOIN observations o ON o.id = observations_fts.rowid WHERE observations_fts MATCH ? AND o.team_id = ?`,
    )
      .bind('cjk_terms:"登录"', f.ids.teamId)
      .first<{ title: string }>();
    expect(hit?.title).toBe('修复用户登录问题');
  });

  it("spreads the turn's tokens over its observations without losing any", () => {
    expect(spreadTokens(10, 3)).toEqual([4, 3, 3]);
    expect(spreadTokens(5, 0)).toEqual([]);
  });
});

describe('storePrompt', () => {
  it('stores a prompt once per number and raises the session prompt count, but stores no text for a private prompt', async () => {
    const f = await fixture();
    const p = {
      teamId: f.ids.teamId,
      projectId: f.projectId,
      sessionDbId: f.sessionDbId,
      authorUserId: f.ids.userId,
      createdAt: 1,
    };
    await storePrompt(env.DB, { ...p, promptNumber: 1, text: 'hello' });
    await storePrompt(env.DB, { ...p, promptNumber: 1, text: 'hello again' });
    await storePrompt(env.DB, { ...p, promptNumber: 2, text: null });
    const rows = await env.DB.prepare('SELECT prompt_number, text FROM prompts WHERE session_id = ?')
      .bind(f.sessionDbId)
      .all();
    expect(rows.results).toEqual([{ prompt_number: 1, text: 'hello' }]);
    const s = await env.DB.prepare('SELECT prompt_count FROM sessions WHERE id = ?')
      .bind(f.sessionDbId)
      .first<{ prompt_count: number }>();
    expect(s?.prompt_count).toBe(2);
  });
});

describe('defaultAfterStore', () => {
  it('runs the live notification even when vector indexing fails, and never throws', async () => {
    const failing = vi.fn(async () => {
      throw new Error('embedder down');
    });
    const publish = vi.fn(async () => undefined);
    const fakeEnv = {
      ...env,
      HUBS: { get: () => ({ publish }), idFromName: (n: string) => n },
    } as unknown as typeof env;
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const stored = {
      teamId: 1,
      observationIds: [5],
      duplicates: 0,
      summaryId: null,
      prompt: { sessionId: 1, promptNumber: 1 },
      notices: [{ kind: 'observation' as const, projectId: 1, id: 5 }],
    };
    await expect(defaultAfterStore(fakeEnv, failing).run(stored)).resolves.toBeUndefined();
    expect(failing).toHaveBeenCalledWith(fakeEnv, stored);
    expect(publish).toHaveBeenCalledWith(1, [{ kind: 'observation', projectId: 1, id: 5 }]);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ level: 'warn', event: 'after-store step failed', message: 'embedder down' }),
    );
    warn.mockRestore();
  });
});
