// The resumable export (GET /api/admin/export?cursor=…): read in bounded responses from cursors, or cut off mid-way
// and resumed from the last cursor line received, it gives exactly the plain export's records; every response
// stays within the step statement budget; a cursor reaches no project the caller cannot read.
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configOf } from '../../../src/config';
import { watchInvocations, type Usage } from '../../../src/db/meter';
import { call, fresh, newIdentity } from '../support/http';
import { cursorToken, parseCursorToken } from '../../../src/transfer/export-resume';
import type { ExportCursor } from '../../../src/transfer/export-cursor';
import { HISTORY_STAGES } from '../../../src/transfer/history';
import { idsOf, seedProject, seedSession, type Ids } from '../support/seed';
import { underPaid } from '../limits';

const PROJECTS = 60;
/** The first project spans three export pages (500 rows a page). */
const BIG = 1_100;

/** `n` observations in one statement (a bounded insert, not through the observer). */
async function bulkObservations(ids: Ids, projectId: number, sessionId: number, n: number, tag: string): Promise<void> {
  await env.DB.prepare(
    `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1)
     INSERT INTO observations (team_id, project_id, session_id, prompt_number, type, title, narrative, facts, concepts, files_read,
        files_modified, created_at, stored_at, discovery_tokens, content_hash, author_user_id, device_id)
     SELECT ?2, ?3, ?4, 1, 'discovery', ?5 || ' note ' || i, 'narrative ' || i, '[]', '[]', '[]', '[]', 1000 + i, 1000 + i, 0,
        ?5 || '-' || ?3 || '-' || i, ?6, ?7 FROM k`,
  )
    .bind(n, ids.teamId, projectId, sessionId, tag, ids.userId, ids.deviceId)
    .run();
}

async function team() {
  const id = await newIdentity();
  const ids = await idsOf(id);
  const tag = fresh('x');
  for (let p = 0; p < PROJECTS; p++) {
    const pid = await seedProject(ids, `github.com/${tag}/p${p}`);
    await bulkObservations(ids, pid, await seedSession(ids, pid, `${tag}-s${p}`), p === 0 ? BIG : 2, tag);
  }
  return { id, ids };
}

interface Piece {
  records: string[];
  next: string | null;
}

/** One response from `cursor`; with `cutAt`, the connection is dropped once that many bytes have arrived. */
async function piece(token: string, cursor: string, cutAt?: number): Promise<Piece> {
  const res = await call(`/api/admin/export?cursor=${encodeURIComponent(cursor)}`, { token });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
    if (cutAt !== undefined && text.length >= cutAt) {
      await reader.cancel();
      break;
    }
  }
  // Only what a cursor line vouches for counts: the tail after the last one may be cut anywhere.
  const lines = text.split('\n');
  const records: string[] = [];
  let kept: string[] = [];
  let next: string | null = cursor;
  for (const line of lines.slice(0, -1)) {
    const r = JSON.parse(line) as { kind: string; next?: string };
    if (r.kind === 'cursor' || r.kind === 'end') {
      records.push(...kept);
      kept = [];
      next = r.kind === 'end' ? null : r.next!;
    } else kept.push(line);
  }
  return { records, next };
}

let usages: Usage[] = [];
let unwatch: () => void = () => undefined;
beforeEach(() => {
  usages = [];
  unwatch = watchInvocations((u) => {
    if (u.label.startsWith('fetch GET /api/admin/export')) usages.push(u);
  });
});
afterEach(() => unwatch());

describe('the resumable export', { timeout: 120_000 }, () => {
  it("gives the plain export's records over several bounded responses, and again after a connection cut mid-way", async () => {
    const { id } = await team();
    // One plain request reads the whole export: this team's needs more than Free's 50 (docs/contracts.md).
    const plain = await underPaid('fetch GET /api/admin/export', 'the plain export of a team this size', async () =>
      (await (await call('/api/admin/export', { token: id.token })).text()).trim().split('\n'),
    );
    expect(plain.length).toBe(1 + PROJECTS * 2 + BIG + (PROJECTS - 1) * 2);

    const whole: string[] = [];
    let responses = 0;
    for (let c: string | null = 'start'; c !== null; responses++) {
      const p: Piece = await piece(id.token, c);
      whole.push(...p.records);
      c = p.next;
    }
    expect(responses).toBeGreaterThan(1);
    expect(whole).toEqual(plain);
    const budget = configOf(env).jobStep.statements;
    const used = usages.slice(1).map((u) => u.statements);
    expect(used.length).toBe(responses);
    expect(Math.max(...used)).toBeLessThanOrEqual(budget);

    // Cut every response after 48 KB (inside the big project's second page, then elsewhere), resume from the last cursor line.
    const resumed: string[] = [];
    let cuts = 0;
    for (let c: string | null = 'start'; c !== null; ) {
      const p: Piece = await piece(id.token, c, 48_000);
      resumed.push(...p.records);
      if (p.next === c) throw new Error('no progress');
      if (p.next !== null) cuts++;
      c = p.next;
    }
    expect(cuts).toBeGreaterThan(responses);
    expect(resumed).toEqual(plain);
  });

  it('reads back every cursor it gives out, the history stages and the tombstones included', () => {
    const cursors: ExportCursor[] = [
      { at: 'users' },
      { at: 'project', after: 3 },
      ...(['sessions', 'prompts', 'observations', 'summaries'] as const).map((at) => ({ at, project: 4, after: 9 })),
      ...HISTORY_STAGES.map((at) => ({ at, after: 12 })),
      { at: 'done' },
    ];
    for (const c of cursors) expect(parseCursorToken(cursorToken(c))).toEqual(c);
    expect(cursorToken({ at: 'tombstones', after: 12 })).toBe('tombstones.12');
  });

  it("refuses a cursor it did not give out and reads nothing of another team's project a cursor names", async () => {
    const { id } = await team();
    const other = await team();
    expect((await call('/api/admin/export?cursor=observations.x.1', { token: id.token })).status).toBe(400);
    const body = (await call('/api/admin/export?cursor=nope', { token: id.token }).then((r) => r.json())) as {
      error: { code: string };
    };
    expect(body.error.code).toBe('invalid_cursor');
    const theirs = await env.DB.prepare('SELECT min(id) AS id FROM projects WHERE team_id = ?')
      .bind(other.ids.teamId)
      .first<{ id: number }>();
    const p = await piece(id.token, `observations.${theirs!.id}.0`);
    expect(p.records).toEqual([]);
  });
});
