// Pure parts of search: the FTS query builder, file-name detection, RRF, the text renderer and the params schema.
import { describe, expect, it } from 'vitest';
import {
  BM25_WEIGHTS,
  FTS_COLUMNS,
  MAX_SCOPE_PROJECTS,
  buildFtsQuery,
  dropPossessive,
  pathLikeTerms,
  scopeMatch,
} from '../../../src/search/fts-query';
import { SearchParams } from '../../../src/search/params';
import { renderSearchText } from '../../../src/search/render';
import { reciprocalRankFusion } from '../../../src/search/rrf';

describe('buildFtsQuery', () => {
  it('quotes every term and joins them with AND for the strict query and OR for the loose one', () => {
    expect(buildFtsQuery('redis timeout')).toEqual({
      all: '"redis" AND "timeout"',
      any: '"redis" OR "timeout"',
      terms: ['redis', 'timeout'],
      fillerOnly: false,
    });
  });

  it('drops FTS operators typed in capitals and keeps lowercase words', () => {
    expect(buildFtsQuery('cache OR NEAR db AND NOT x').all).toBe('"cache" AND "db" AND "x"');
    expect(buildFtsQuery('near miss').all).toBe('"near" AND "miss"');
  });

  it('keeps punctuated names as one phrase and lets their parts fill on their own', () => {
    expect(buildFtsQuery('src/auth/verify-token.ts')).toEqual({
      all: '"src auth verify token ts"',
      any: '"src" OR "auth" OR "verify" OR "token" OR "ts"',
      terms: ['src auth verify token ts'],
      fillerOnly: false,
    });
  });

  it('removes filler words unless nothing else is left', () => {
    expect(buildFtsQuery('how do we rotate the keys').terms).toEqual(['rotate', 'keys']);
    expect(buildFtsQuery('the').terms).toEqual(['the']);
    expect(buildFtsQuery('what did we do').fillerOnly).toBe(true);
    expect(buildFtsQuery('what did we deploy').fillerOnly).toBe(false);
  });

  it('yields nothing for text without letters or digits', () => {
    for (const q of ['', '   ', '"()*-^:', '🔥🚀', '\u0000'])
      expect(buildFtsQuery(q)).toEqual({ all: null, any: null, terms: [], fillerOnly: false });
  });

  it('never lets a double quote escape its phrase', () => {
    const { all } = buildFtsQuery('say "hi" loudly');
    expect(all).toBe('"say" AND "hi" AND "loudly"');
  });

  it('turns CJK runs into bigram phrases on the cjk_terms column, split at particles', () => {
    expect(buildFtsQuery('用户身份').all).toBe('{cjk_terms} : "用户 户身 身份"');
    expect(buildFtsQuery('用户身份').any).toBe('{cjk_terms} : "用户" OR {cjk_terms} : "户身" OR {cjk_terms} : "身份"');
    expect(buildFtsQuery('トークンの期限').terms).toEqual(['トークン', '期限']);
    expect(buildFtsQuery('缓').all).toBe('{cjk_terms} : "缓"*');
  });

  it('mixes CJK and Latin terms in one query', () => {
    expect(buildFtsQuery('修复bug 超时').all).toBe('{cjk_terms} : "修复" AND "bug" AND {cjk_terms} : "超时"');
  });

  it('keeps what a question is about and drops its question words, auxiliaries and possessives', () => {
    expect(buildFtsQuery("What are Kate's hobbies?").terms).toEqual(['kate', 'hobbies']);
    expect(buildFtsQuery('Where did Kate’s brother move to?').terms).toEqual(['kate', 'brother', 'move']);
    expect(buildFtsQuery('When did we rotate the signing keys?').terms).toEqual(['rotate', 'signing', 'keys']);
    expect(buildFtsQuery('How has he been doing since then?').terms).toEqual(['since']);
  });

  it('keeps code identifiers and file names whole while letting their parts fill', () => {
    expect(buildFtsQuery('getUserToken() throws').terms).toEqual(['getusertoken', 'throws']);
    expect(buildFtsQuery('why is user_id null').terms).toEqual(['user id', 'null']);
    expect(buildFtsQuery('Why does deploy.sh fail?').terms).toEqual(['deploy sh', 'fail']);
    expect(pathLikeTerms('Why does deploy.sh fail?')).toEqual(['deploy.sh']);
    expect(pathLikeTerms('what broke in src/auth/verify-token.ts?')).toEqual(['src/auth/verify-token.ts']);
  });

  it('handles questions that mix CJK and Latin words', () => {
    expect(buildFtsQuery('Why does トークン expire?').terms).toEqual(['トークン', 'expire']);
    expect(buildFtsQuery('为什么 token 过期?').terms).toEqual(['为什么', 'token', '过期']);
  });

  it('drops a possessive only at the end of a chunk, in one pass over any punctuation', () => {
    expect(dropPossessive("Kate's?!")).toBe('Kate?!');
    expect(dropPossessive("it's")).toBe('it');
    expect(dropPossessive('its')).toBe('its');
    expect(dropPossessive("'s")).toBe("'s");
    expect(dropPossessive(`a${'!'.repeat(100_000)}`)).toBe(`a${'!'.repeat(100_000)}`);
  });

  it('caps the number of terms', () => {
    const long = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    expect(buildFtsQuery(long).terms).toHaveLength(24);
  });
});

describe('scopeMatch', () => {
  it('intersects the expression with the project tokens on the scope column', () => {
    expect(scopeMatch('"redis" AND "timeout"', [12, 13])).toBe(
      '("redis" AND "timeout") AND fts_scope : ("\uE000p12" OR "\uE000p13")',
    );
  });

  it('adds nothing team-wide or when the project list is too long to be worth merging', () => {
    expect(scopeMatch('"redis"', null)).toBe('"redis"');
    expect(scopeMatch('"redis"', [])).toBe('"redis"');
    const many = Array.from({ length: MAX_SCOPE_PROJECTS + 1 }, (_, i) => i + 1);
    expect(scopeMatch('"redis"', many)).toBe('"redis"');
    expect(scopeMatch('"redis"', many.slice(1))).toContain(`"\uE000p${MAX_SCOPE_PROJECTS + 1}"`);
  });

  it('gives the scope column one bm25 weight of zero so it never affects ranking', () => {
    expect(BM25_WEIGHTS).toHaveLength(FTS_COLUMNS.length);
    expect(BM25_WEIGHTS[FTS_COLUMNS.indexOf('fts_scope')]).toBe(0);
  });

  it('never lets user text spell a scope token: the private-use mark splits words', () => {
    expect(buildFtsQuery('\uE000p12 x\uE000t3').all).toBe('"p12" AND "x t3"');
  });
});

describe('pathLikeTerms', () => {
  it('recognises file names and paths but not plain words or sentences ending in a period', () => {
    expect(pathLikeTerms('why does verify-token.ts fail in ./src/a/b.tsx and (deploy.sh)')).toEqual([
      'verify-token.ts',
      'src/a/b.tsx',
      'deploy.sh',
    ]);
    expect(pathLikeTerms('plain words only')).toEqual([]);
    expect(pathLikeTerms('it broke.')).toEqual([]);
  });
});

describe('reciprocalRankFusion', () => {
  it('rewards ids ranked well in both lists and keeps first-list order on ties', () => {
    const fused = reciprocalRankFusion([
      [1, 2, 3],
      [3, 4],
    ]);
    expect(fused.map((f) => f.id)).toEqual([3, 1, 2, 4]);
    expect(fused[0]!.score).toBeCloseTo(1 / 63 + 1 / 61, 10);
    expect(
      reciprocalRankFusion([
        [5, 6],
        [6, 5],
      ]).map((f) => f.id),
    ).toEqual([5, 6]);
  });
});

describe('renderSearchText', () => {
  it('prints a header and one compact line per result, ids first', () => {
    const text = renderSearchText(
      {
        results: [
          {
            kind: 'observation',
            id: 42,
            createdAt: Date.UTC(2026, 0, 2, 3, 4),
            type: 'bugfix',
            title: 'Fix  the\nparser',
            projectKey: 'github.com/a/b',
            author: 'ana',
            tokens: 120,
            score: 0.03,
          },
        ],
        total: 7,
        mode: 'hybrid',
      },
      3,
    );
    expect(text).toBe(
      '4-4 of 7 (mode hybrid); full records: get_observations ids=…\n#42  2026-01-02 03:04  bugfix  Fix the parser  (github.com/a/b, @ana, ~120 tok)  evidence: unknown\n',
    );
    expect(renderSearchText({ results: [], total: 0, mode: 'fts' })).toBe('No matches (mode fts).\n');
  });
});

describe('SearchParams', () => {
  it('accepts repeated and comma-separated lists, dates as ISO or epoch ms, and defaults paging', () => {
    const p = SearchParams.parse({
      q: ' x ',
      project: ['a,b', 'b'],
      since: '2026-01-01T00:00:00Z',
      until: '1767225600000',
    });
    expect(p).toMatchObject({
      q: 'x',
      project: ['a', 'b'],
      since: Date.UTC(2026, 0, 1),
      until: 1767225600000,
      limit: 20,
      offset: 0,
      mode: 'hybrid',
    });
  });

  it('refuses more than ten values of a list and unknown modes', () => {
    expect(SearchParams.safeParse({ type: Array.from({ length: 11 }, (_, i) => `t${i}`) }).success).toBe(false);
    expect(SearchParams.safeParse({ mode: 'vector' }).success).toBe(false);
  });
});
