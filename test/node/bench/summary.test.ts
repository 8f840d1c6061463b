// bench/summary.mjs: the issue-13 table `npm run bench` prints, read from the sections the benches wrote.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { issue13Table } from '../../../bench/summary.mjs';

const doc = [
  '<!-- hooks-client:start -->',
  '| case | p50 ms | p95 ms | p50 vs node -e 0 | CPU p50 ms | CPU vs node -e 0 |',
  '|---|---|---|---|---|---|',
  '| node -e: one raw node:net request to the stub (floor) | 75.8 | 187.8 | 1.57× | 20.9 | 1.26× |',
  `| sh -c 'node "…/cairn.cjs" hook post-tool-use' as cairn install writes it, server up | 154.3 | 306.5 | 3.19× | 26.6 | 1.60× |`,
  "| sh -c '… hook post-tool-use' with CAIRN_SENDER=off (the hook sends itself), server up | 39.0 | 46.9 | 1.90× | 26.8 | 1.62× |",
  'Run at 2026-12-01T08:21:10.378Z.',
  '<!-- hooks-client:end -->',
  '<!-- pipeline:start -->',
  '| before (3fb3690) | 546 | 72 | **0.13×** | 10.5 | 82.4 | **7.82×** | 279.9 | 0 |',
  '| after (this tree) | 306 | 67 | **0.22×** | 13.3 | 94.7 | **7.10×** | 272.0 | 0 |',
  'Run at 2026-12-01T08:17:14.467Z on this 2-core box.',
  '<!-- pipeline:end -->',
  '<!-- cold-start:start -->',
  '| before (a43ac6c) | 1542 KiB | 394 KiB | 93 | 342 |',
  '| after (this tree) | 901 KiB | 276 KiB | 68 | 285 |',
  'Run at 2026-12-01T07:55:13.292Z (Node v20.20.2).',
  '<!-- cold-start:end -->',
].join('\n');

describe('the issue-13 summary of the benches', () => {
  it('puts each section’s before and after side by side, naming the baseline commit and when the section ran', () => {
    const lines = (issue13Table(doc) as string).split('\n');
    expect(lines.find((l) => l.startsWith('| post-tool-use'))).toContain(
      '| the hook sends itself (CAIRN_SENDER=off, same run): 1.62× (1.90×) | quick path + background sender: 1.60× (3.19×); node:net floor 1.26× | ≤ 1.3× | 2026-12-01 08:21 |',
    );
    expect(lines.find((l) => l.startsWith('| ingest'))).toContain(
      '| 3fb3690: throughput 0.13×, p50 7.82× (72 req/s, 82.4 ms) | throughput 0.22×, p50 7.10× (67 req/s, 94.7 ms) |',
    );
    expect(lines.find((l) => l.startsWith('| production bundle'))).toContain(
      '| a43ac6c: 1542 KiB raw, 394 KiB gzip, start 93 ms CPU | 901 KiB raw, 276 KiB gzip, start 68 ms CPU |',
    );
  });

  it("puts the ingest floor (an empty SessionDO round trip, same run) beside ingest's after when the section has it", () => {
    const withFloor = doc.replace(
      'Run at 2026-12-01T08:17:14.467Z on this 2-core box.',
      '| after: floor (token check, limiter, one empty SessionDO round trip) | 306 | 61 | 0.20× | 13.3 | 90.1 | 6.77× | 260.0 | 0 |\nRun at 2026-12-01T08:17:14.467Z on this 2-core box.',
    );
    const ingest = (issue13Table(withFloor) as string).split('\n').find((l) => l.startsWith('| ingest'));
    expect(ingest).toContain(
      '| throughput 0.22×, p50 7.10× (67 req/s, 94.7 ms); floor (an empty SessionDO round trip) 0.20×, p50 6.77× |',
    );
  });

  it('says the before of the hook row is not measured when the run had no CAIRN_SENDER=off case', () => {
    const older = doc
      .split('\n')
      .filter((l) => !l.includes('CAIRN_SENDER=off'))
      .join('\n');
    const hook = (issue13Table(older) as string).split('\n').find((l) => l.startsWith('| post-tool-use'));
    expect(hook).toContain('| not measured | quick path + background sender: 1.60× (3.19×)');
  });

  it('gives team-wide search with unseen queries, then repeated queries and keyword search alone from the same run', () => {
    const withSearch = [
      doc,
      '<!-- search-teamwide:start -->',
      '| search FTS, whole team | before (2e7c040) | 99.7 | 377.5 |',
      '| search FTS, whole team | after (this tree) | 99.6 | 323.2 |',
      '| search hybrid, whole team | before (2e7c040) | 358.9 | 681.9 |',
      '| search hybrid, whole team | after (this tree) | 226.6 | 569.6 |',
      '| search hybrid, whole team, repeated queries | before (2e7c040) | 300.5 | 763.9 |',
      '| search hybrid, whole team, repeated queries | after (this tree) | 138.9 | 463.0 |',
      'Run at 2026-12-01T22:35:50.000Z.',
      '<!-- search-teamwide:end -->',
    ].join('\n');
    const search = (issue13Table(withSearch) as string)
      .split('\n')
      .find((l) => l.startsWith('| team-wide hybrid search'));
    expect(search).toBe(
      '| team-wide hybrid search, 100k rows (local) | 2e7c040: p95 681.9 ms (p50 358.9); repeated queries p95 763.9, FTS alone p95 377.5 | p95 569.6 ms (p50 226.6); repeated queries p95 463.0, FTS alone p95 323.2 | p95 ≤ 100 ms | 2026-12-01 22:35 |',
    );
  });

  it('says a section that was never run is not measured instead of inventing figures', () => {
    const search = (issue13Table(doc) as string).split('\n').find((l) => l.startsWith('| team-wide hybrid search'));
    expect(search).toBe(
      '| team-wide hybrid search, 100k rows (local) | not measured | not measured | p95 ≤ 100 ms | ? |',
    );
  });
});
