// Proposals on the real stack (issue 38): with the team setting `consolidation: review`, a consolidation run and the
// observer's corrections change nothing until an admin decides in the review queue; accepting applies them as
// versions of the records, discarding leaves nothing; a forgotten record takes the proposals naming it along.
// Consolidation is the real job over D1; the observer is the real Anthropic SDK against the scripted fake.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { consolidateJob } from '../../../src/consolidation/job';
import { lastUserText, recorded, script, send, settled, waitFor } from '../pipeline/support';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { runKindInline } from '../support/jobs';
import { idsOf, seedObservation, seedProject, seedSession, type Ids, type SeedObservation } from '../support/seed';

interface World {
  owner: TestIdentity;
  ids: Ids;
  mate: TestIdentity;
  project: string;
  projectId: number;
  session: number;
}

async function world(consolidation: 'review' | 'auto' = 'review'): Promise<World> {
  const owner = await newIdentity({ role: 'owner' });
  const mate = await newIdentity({ team: owner.team, role: 'member' });
  const ids = await idsOf(owner);
  const project = `github.com/acme/${fresh('repo')}`;
  const projectId = await seedProject(ids, project);
  const session = await seedSession(ids, projectId, fresh('s'));
  const res = await call('/api/admin/settings', { token: owner.token, method: 'PATCH', json: { consolidation } });
  expect(res.status, await res.clone().text()).toBe(200);
  return { owner, ids, mate, project, projectId, session };
}

const skew = (word: string): SeedObservation => ({
  type: 'bugfix',
  title: `Token refresh fails when the clock skews ${word} five minutes`,
  narrative: `The ${word} check in verifyToken compares exp against Date.now() without leeway, so a laptop whose clock runs five minutes fast gets 401 on every refresh.`,
  facts: ['verifyToken has no clock leeway', 'refresh returns 401 on skewed clocks'],
  concepts: ['gotcha'],
  filesModified: ['src/auth/verify.ts'],
});

/** Two near-duplicates (consolidation would merge the older into the newer) and an unrelated record. */
async function pair(w: World) {
  const t0 = Date.now() - 60_000;
  const older = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by more than'), createdAt: t0 });
  const newer = await seedObservation(w.ids, w.projectId, w.session, { ...skew('by over'), createdAt: t0 + 1_000 });
  return { older, newer };
}

const runConsolidation = (w: World) =>
  runKindInline(env, consolidateJob, w.ids.teamId, { projectId: w.projectId }, w.ids.userId);

const stateOf = (id: number) =>
  env.DB.prepare('SELECT merged_into, superseded_by FROM observations WHERE id = ?')
    .bind(id)
    .first<{ merged_into: number | null; superseded_by: number | null }>();
const eventsOf = async (id: number) =>
  (
    await env.DB.prepare('SELECT action, actor FROM observation_events WHERE observation_id = ? ORDER BY id')
      .bind(id)
      .all<{ action: string; actor: string }>()
  ).results;
const proposalCount = async (teamId: number) =>
  (await env.DB.prepare('SELECT COUNT(*) AS n FROM proposals WHERE team_id = ?').bind(teamId).first<{ n: number }>())
    ?.n;

interface Proposal {
  id: number;
  kind: string;
  record: { id: number };
  sources?: { id: number }[];
  by?: { id: number };
  changes: Record<string, unknown>[];
}
async function queue(token: string): Promise<Proposal[]> {
  const res = await call('/api/admin/review', { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { proposals: Proposal[] }).proposals;
}
const decide = (token: string, id: number, decision: 'accept' | 'discard') =>
  call(`/api/admin/proposals/${id}`, { token, json: { decision } });

describe('proposals (consolidation: review)', { timeout: 90_000 }, () => {
  it('changes nothing on a consolidation run until an admin accepts; accepted, the merge is a version of the source', async () => {
    const w = await world();
    const { older, newer } = await pair(w);
    const out = await runConsolidation(w);
    expect(out.result).toMatchObject({ clusters: 1, merged: 0, proposed: 1 });
    expect(await stateOf(older)).toEqual({ merged_into: null, superseded_by: null });
    expect(await eventsOf(older)).toEqual([]);
    // The teammate's context still has both; the queue says what accepting would change.
    const ctx = await (
      await call(`/api/context?project=${encodeURIComponent(w.project)}&full=5`, { token: w.mate.token })
    ).text();
    expect(ctx.match(/Token refresh fails when the clock skews/g)?.length).toBe(2);
    const [p] = await queue(w.owner.token);
    expect(p).toMatchObject({
      kind: 'merge',
      record: { id: newer },
      sources: [{ id: older }],
      changes: [{ id: older, merged_into: { from: null, to: newer } }],
    });
    // A second run proposes nothing new.
    expect((await runConsolidation(w)).result).toMatchObject({ proposed: 0 });
    expect(await proposalCount(w.ids.teamId)).toBe(1);

    // A member cannot decide; the owner accepts.
    expect((await decide(w.mate.token, p!.id, 'accept')).status).toBe(403);
    const res = await decide(w.owner.token, p!.id, 'accept');
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await stateOf(older)).toEqual({ merged_into: newer, superseded_by: null });
    const h = (await (await call(`/api/corrections/history?id=${older}`, { token: w.owner.token })).json()) as {
      versions: { version: number; action: string; who: string; state: object }[];
    };
    expect(h.versions[1]).toMatchObject({
      version: 2,
      action: 'merge',
      who: w.owner.user,
      state: { merged_into: { from: null, to: newer } },
    });
    expect(await proposalCount(w.ids.teamId)).toBe(0);
    expect(await queue(w.owner.token)).toEqual([]);
  });

  it('leaves nothing when a merge is discarded: the records as they were, no version, no proposal', async () => {
    const w = await world();
    const { older, newer } = await pair(w);
    await runConsolidation(w);
    const [p] = await queue(w.owner.token);
    const res = await decide(w.owner.token, p!.id, 'discard');
    expect(res.status).toBe(200);
    for (const id of [older, newer]) {
      expect(await stateOf(id)).toEqual({ merged_into: null, superseded_by: null });
      expect(await eventsOf(id)).toEqual([]);
    }
    expect(await proposalCount(w.ids.teamId)).toBe(0);
    expect((await decide(w.owner.token, p!.id, 'accept')).status).toBe(404);
  });

  it('merges at once with consolidation: auto, as before', async () => {
    const w = await world('auto');
    const { older, newer } = await pair(w);
    expect((await runConsolidation(w)).result).toMatchObject({ merged: 1, proposed: 0 });
    expect((await stateOf(older))?.merged_into).toBe(newer);
    expect(await proposalCount(w.ids.teamId)).toBe(0);
  });

  it("keeps the observer's correction waiting; accepted it supersedes as a version, discarded it leaves the record current", async () => {
    const w = await world();
    const ROOT = '/home/dev/widgets';
    const turn = async (old: number) => {
      const sid = fresh('s');
      const scenario = fresh('prop');
      await script(scenario, [
        {
          text:
            `<observation><type>change</type><title>Feature flags now come from flags.json ${fresh('t')}</title>` +
            `<narrative>src/config.ts reads flags.json.</narrative><concepts><concept>how-it-works</concept></concepts>` +
            `<supersedes id="${old}">flags moved to flags.json</supersedes></observation>`,
        },
      ]);
      const ev = (extra: Record<string, unknown>) => ({
        session_id: sid,
        project: w.project,
        cwd: ROOT,
        project_root: ROOT,
        occurred_at: Date.now(),
        event_id: fresh('ev'),
        tool_use_id: fresh('tu'),
        ...extra,
      });
      await send(w.owner.token, 'init', ev({ prompt: 'Move the feature flags out of the environment' }));
      await send(
        w.owner.token,
        'observations',
        ev({
          tool_name: 'Edit',
          tool_input: {
            file_path: `${ROOT}/src/config.ts`,
            old_string: 'env',
            new_string: `flags SCENARIO:${scenario}`,
          },
          tool_response: { filePath: `${ROOT}/src/config.ts`, success: true },
        }),
      );
      await waitFor(w.owner.token, sid, (s) => settled(s) && s.observations_stored >= 1);
      expect(lastUserText((await recorded(scenario))[0]! as Parameters<typeof lastUserText>[0])).toContain(`#${old} [`);
    };
    const seedOld = (title: string) =>
      seedObservation(w.ids, w.projectId, w.session, { title, filesModified: ['src/config.ts'] });

    const kept = await seedOld('Feature flags are read from the FLAGS variable');
    await turn(kept);
    expect(await stateOf(kept)).toEqual({ merged_into: null, superseded_by: null });
    expect(await eventsOf(kept)).toEqual([]);
    const [p] = await queue(w.owner.token);
    expect(p).toMatchObject({ kind: 'supersede', record: { id: kept } });
    const by = p!.by!.id;
    expect(p!.changes).toEqual([{ id: kept, superseded_by: { from: null, to: by } }]);
    expect((await decide(w.owner.token, p!.id, 'discard')).status).toBe(200);
    expect(await stateOf(kept)).toEqual({ merged_into: null, superseded_by: null });
    expect(await eventsOf(kept)).toEqual([]);

    const replaced = await seedOld('Feature flags come from FLAGS, a comma list');
    await turn(replaced);
    const [q] = (await queue(w.owner.token)).filter((x) => x.record.id === replaced);
    expect((await decide(w.owner.token, q!.id, 'accept')).status).toBe(200);
    expect((await stateOf(replaced))?.superseded_by).toBe(q!.by!.id);
    expect(await eventsOf(replaced)).toEqual([{ action: 'supersede', actor: 'observer' }]);
  });

  it('loses a proposal with any record it names when that record is forgotten', async () => {
    const w = await world();
    const { newer } = await pair(w);
    await runConsolidation(w);
    expect(await proposalCount(w.ids.teamId)).toBe(1);
    const res = await call('/api/forget', { token: w.owner.token, json: { kind: 'observation', id: newer } });
    expect(res.status).toBe(200);
    expect(await proposalCount(w.ids.teamId)).toBe(0);
  });
});
