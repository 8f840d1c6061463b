// Live stream: /api/live over the team's HubDO, fed by notifyStored, filtered per viewer.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { MAX_STREAM_MS, hubStub } from '../../../src/live/hub-do';
import { notifyStored } from '../../../src/live/notify';
import type { FeedItem } from '#shared/wire/feed';
import { call, fresh, newIdentity, type TestIdentity } from '../support/http';
import { seedObservation, seedProject, seedSession, seedSummary, seedWorld } from '../support/seed';

interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * How long next() waits for an event that should come. Not a speed claim (bench/ measures that): a bound on a
 * stall, generous so a loaded machine cannot fail a correct run. That something does NOT arrive is shown by
 * order instead of by waiting: a later event the viewer may see arrives first (see `nextIs`).
 */
const STALL_MS = 20_000;

/** Reads SSE frames from a response body; next() waits up to `ms` for the next event (null on timeout). */
function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const queue: SseEvent[] = [];
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  async function next(ms = STALL_MS): Promise<SseEvent | null> {
    const deadline = Date.now() + ms;
    while (queue.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      pending ??= reader.read();
      const r = await Promise.race([pending, new Promise<'timeout'>((ok) => setTimeout(() => ok('timeout'), left))]);
      if (r === 'timeout') return null;
      pending = null;
      if (r.done) return null;
      buf += decoder.decode(r.value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event && data) queue.push({ event, data: JSON.parse(data) });
      }
    }
    return queue.shift()!;
  }
  return { next, cancel: () => reader.cancel() };
}

async function connect(who: TestIdentity, query = '') {
  const res = await call(`/api/live${query}`, { token: who.token });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const sse = sseReader(res);
  expect((await sse.next())?.event).toBe('ready');
  return sse;
}

const world = () => seedWorld();

/**
 * Notifies the team's hub of a fresh row the viewer may see, and answers the id of the next event the stream
 * delivers. Events of one stream arrive in the order they were notified, so when this is the marker, nothing
 * notified before it was delivered in between.
 */
async function nextAfterMarker(
  w: Awaited<ReturnType<typeof world>>,
  sse: ReturnType<typeof sseReader>,
): Promise<{ next: unknown; marker: number }> {
  const marker = await seedObservation(w.ids, w.projectId, w.sessionId, { title: `marker ${fresh('m')}` });
  await notifyStored(env, w.ids.teamId, { kind: 'observation', projectId: w.projectId, id: marker });
  return { next: ((await sse.next())?.data as FeedItem | undefined)?.id, marker };
}

describe('live stream', () => {
  it('delivers a stored observation and summary to a connected viewer', async () => {
    const w = await world();
    const sse = await connect(w.id, `?project=${encodeURIComponent(w.key)}`);
    const obs = await seedObservation(w.ids, w.projectId, w.sessionId, {
      title: 'fixed the flaky test',
      type: 'bugfix',
    });
    const sum = await seedSummary(w.ids, w.projectId, w.sessionId, { request: 'stabilise CI' });
    await notifyStored(env, w.ids.teamId, [
      { kind: 'observation', projectId: w.projectId, id: obs },
      { kind: 'summary', projectId: w.projectId, id: sum },
    ]);
    const first = (await sse.next())?.data as FeedItem;
    const second = (await sse.next())?.data as FeedItem;
    expect(first).toMatchObject({
      kind: 'observation',
      id: obs,
      title: 'fixed the flaky test',
      type: 'bugfix',
      author: w.id.user,
      projectKey: w.key,
    });
    expect(second).toMatchObject({ kind: 'summary', id: sum, request: 'stabilise CI' });
    await sse.cancel();
  });

  it('sends a teammate nothing from a private project or a sensitive observation, but does send shared work', async () => {
    const w = await world();
    const mate = await newIdentity({ team: w.id.team });
    const privateId = await seedProject(w.ids, `local/${w.id.user}/${fresh('p')}`, 'private');
    const privSession = await seedSession(w.ids, privateId, fresh('sess'));
    const sseMate = await connect(mate);
    const sseMe = await connect(w.id);
    const priv = await seedObservation(w.ids, privateId, privSession, { title: 'private thing' });
    const secret = await seedObservation(w.ids, w.projectId, w.sessionId, {
      title: 'api key rotated',
      type: 'sensitive',
    });
    const shared = await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'shared thing' });
    await notifyStored(env, w.ids.teamId, { kind: 'observation', projectId: privateId, id: priv });
    await notifyStored(env, w.ids.teamId, { kind: 'observation', projectId: w.projectId, id: secret });
    await notifyStored(env, w.ids.teamId, { kind: 'observation', projectId: w.projectId, id: shared });
    expect(((await sseMate.next())!.data as FeedItem).id).toBe(shared);
    const mine = [await sseMe.next(), await sseMe.next(), await sseMe.next()].map((e) => (e!.data as FeedItem).id);
    expect(mine).toEqual([priv, secret, shared]);
    const { next, marker } = await nextAfterMarker(w, sseMate);
    expect(next).toBe(marker);
    await sseMate.cancel();
    await sseMe.cancel();
  });

  it('filters by the project the viewer is watching and ignores deleted rows', async () => {
    const w = await world();
    const otherId = await seedProject(w.ids, `github.com/acme/${fresh('other')}`);
    const otherSession = await seedSession(w.ids, otherId, fresh('sess'));
    const sse = await connect(w.id, `?project=${encodeURIComponent(w.key)}`);
    const elsewhere = await seedObservation(w.ids, otherId, otherSession, { title: 'elsewhere' });
    const deleted = await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'deleted' });
    await env.DB.prepare('UPDATE observations SET deleted_at = ? WHERE id = ?').bind(Date.now(), deleted).run();
    const here = await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'here' });
    await notifyStored(env, w.ids.teamId, [
      { kind: 'observation', projectId: otherId, id: elsewhere },
      { kind: 'observation', projectId: w.projectId, id: deleted },
      { kind: 'observation', projectId: w.projectId, id: here },
    ]);
    expect(((await sse.next())!.data as { title: string }).title).toBe('here');
    const { next, marker } = await nextAfterMarker(w, sse);
    expect(next).toBe(marker);
    await sse.cancel();
  });

  it('never sends one team a row of another team, even when told its id', async () => {
    const a = await world();
    const b = await world();
    const sseB = await connect(b.id);
    const secret = await seedObservation(a.ids, a.projectId, a.sessionId, { title: 'team A only' });
    // A confused or malicious caller names team B's hub with team A's row id.
    await notifyStored(env, b.ids.teamId, { kind: 'observation', projectId: a.projectId, id: secret });
    const { next, marker } = await nextAfterMarker(b, sseB);
    expect(next).toBe(marker);
    await sseB.cancel();
  });

  it('refuses a stream without a token and for a project the caller cannot see', async () => {
    const w = await world();
    expect((await call('/api/live')).status).toBe(401);
    const stranger = await newIdentity();
    const res = await call(`/api/live?project=${encodeURIComponent(w.key)}`, { token: stranger.token });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('keeps working when nobody is listening and when the hub cannot be reached', async () => {
    const w = await world();
    const obs = await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'unheard' });
    await expect(
      notifyStored(env, w.ids.teamId, { kind: 'observation', projectId: w.projectId, id: obs }),
    ).resolves.toBeUndefined();
    const broken = {
      HUBS: {
        idFromName: () => {
          throw new Error('no hub');
        },
      },
    } as unknown as Pick<typeof env, 'HUBS'>;
    await expect(
      notifyStored(broken, w.ids.teamId, { kind: 'observation', projectId: w.projectId, id: obs }),
    ).resolves.toBeUndefined();
  });

  it('recycles old streams so the token is checked again, and heartbeats forget viewers who left', async () => {
    const w = await world();
    const hub = hubStub(env, w.ids.teamId);
    const old = await connect(w.id);
    const leaving = await connect(w.id);
    expect(await hub.subscriberCount()).toBe(2);
    await leaving.cancel();
    const obs = await seedObservation(w.ids, w.projectId, w.sessionId, { title: 'after one left' });
    await notifyStored(env, w.ids.teamId, { kind: 'observation', projectId: w.projectId, id: obs });
    expect(((await old.next())!.data as { title: string }).title).toBe('after one left');
    await expect.poll(async () => (await hub.sweep(Date.now()), hub.subscriberCount()), { timeout: STALL_MS }).toBe(1);
    await hub.sweep(Date.now() + MAX_STREAM_MS + 1);
    expect((await old.next())?.event).toBe('bye');
    expect(await hub.subscriberCount()).toBe(0);
  });
});
