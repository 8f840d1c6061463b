// HubDO: one per team; holds the viewers' event streams and fans out newly stored rows they may see.
import { DurableObject } from 'cloudflare:workers';
import { countedStub, meterDurableObject } from '../db/meter-bindings';
import { getTeamSettings } from '../db/team-settings';
import type { CairnEnv } from '../env';
import type { FeedItem } from '#shared/wire/feed';
import { loadItemsByIds } from '../feed/feed';
import { sseComment, sseEvent } from './sse';
import { teamDb } from '../db/shards';
import { viewerOf } from '../db/visibility';

/**
 * What the store tells the hub. Only kind, projectId and id are needed: the hub re-reads the row with each
 * subscriber's visibility before sending, so a deleted or invisible row never reaches a viewer. The display
 * fields are optional hints.
 */
export interface StoredNotice {
  kind: 'observation' | 'summary';
  projectId: number;
  id: number;
  sessionId?: number;
  type?: string;
  title?: string | null;
  createdAt?: number;
  authorUserId?: number;
}

/** One hub per team. */
export const hubName = (teamId: number) => `team:${teamId}`;

/** What a viewer asked to watch. */
export interface Subscription {
  userId: number;
  /** null = every project the user may see; the hub re-checks visibility per row anyway. */
  projectIds: number[] | null;
}

interface Subscriber extends Subscription {
  writer: WritableStreamDefaultWriter<Uint8Array>;
  openedAt: number;
}

const HEARTBEAT_MS = 25_000;
/** Streams are closed after this long so the client reconnects and its token is checked again. */
export const MAX_STREAM_MS = 10 * 60_000;
/** A viewer this many frames behind is dropped rather than buffered without bound. */
const MAX_BACKLOG = 64;

export class HubDO extends DurableObject<CairnEnv> {
  #subs = new Map<number, Subscriber>();
  #nextId = 1;
  #teamId: number | null = null;

  async ping(): Promise<string> {
    return 'ok';
  }

  /** Number of open streams (for tests and status). */
  async subscriberCount(): Promise<number> {
    return this.#subs.size;
  }

  /** Opens an SSE byte stream for one viewer. The caller has authenticated them and resolved projectIds. */
  async subscribe(teamId: number, sub: Subscription): Promise<ReadableStream<Uint8Array>> {
    if (!this.#claimTeam(teamId)) throw new Error('hub belongs to another team');
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
    const id = this.#nextId++;
    this.#subs.set(id, {
      userId: sub.userId,
      projectIds: sub.projectIds ? [...sub.projectIds] : null,
      writer,
      openedAt: Date.now(),
    });
    writer.closed.catch(() => this.#drop(id));
    this.#write(id, sseEvent('ready', { heartbeatMs: HEARTBEAT_MS }, 3000));
    await this.#ensureAlarm();
    return readable;
  }

  /** Called by notifyStored. Re-reads each row once per distinct user, then sends it to their streams. */
  async publish(teamId: number, notices: StoredNotice[]): Promise<number> {
    if (this.#subs.size === 0 || !this.#claimTeam(teamId)) return 0;
    const obsIds = unique(notices.filter((n) => n.kind === 'observation').map((n) => n.id));
    const sumIds = unique(notices.filter((n) => n.kind === 'summary').map((n) => n.id));
    if (!obsIds.length && !sumIds.length) return 0;
    const d = await teamDb(this.env, teamId);
    const settings = await getTeamSettings(d, teamId);
    const byUser = new Map<number, number[]>();
    for (const [id, s] of this.#subs) byUser.set(s.userId, [...(byUser.get(s.userId) ?? []), id]);
    let sent = 0;
    for (const [userId, subIds] of byUser) {
      // No role is known here, so held rows reach only their author's stream (admins see them on the next read).
      const viewer = viewerOf({ teamId, userId }, settings);
      const items = await loadItemsByIds(d, viewer, obsIds, sumIds);
      for (const subId of subIds) {
        const s = this.#subs.get(subId);
        if (!s) continue;
        for (const item of items) {
          if (!wants(s, item)) continue;
          this.#write(subId, sseEvent('item', item));
          sent++;
        }
      }
    }
    return sent;
  }

  /** Heartbeat keeps proxies from closing idle streams and finds dead ones; old streams are recycled. */
  async alarm(): Promise<void> {
    await this.sweep(Date.now());
  }

  /** One heartbeat pass at `now`: pings live streams, closes those past MAX_STREAM_MS, re-arms the alarm. */
  async sweep(now: number): Promise<void> {
    for (const [id, s] of this.#subs) {
      if (now - s.openedAt >= MAX_STREAM_MS) {
        this.#write(id, sseEvent('bye', { reason: 'reconnect' }));
        s.writer.close().catch(() => {});
        this.#subs.delete(id);
      } else {
        this.#write(id, sseComment('ping'));
      }
    }
    await this.#ensureAlarm();
  }

  #claimTeam(teamId: number): boolean {
    this.#teamId ??= teamId;
    return this.#teamId === teamId;
  }

  #write(id: number, frame: Uint8Array): void {
    const s = this.#subs.get(id);
    if (!s) return;
    if ((s.writer.desiredSize ?? 0) < -MAX_BACKLOG) {
      this.#drop(id);
      return;
    }
    s.writer.write(frame).catch(() => this.#drop(id));
  }

  #drop(id: number): void {
    const s = this.#subs.get(id);
    if (!s) return;
    this.#subs.delete(id);
    s.writer.abort('closed').catch(() => {});
  }

  async #ensureAlarm(): Promise<void> {
    if (this.#subs.size === 0) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null) await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
  }
}

// Every RPC method and the alarm is an invocation of its own, counted (src/db/meter.ts).
meterDurableObject(HubDO, 'hub');

const unique = (xs: number[]) => [...new Set(xs.filter((x) => Number.isSafeInteger(x) && x > 0))].slice(0, 200);

const wants = (s: Subscription, item: FeedItem) => s.projectIds === null || s.projectIds.includes(item.projectId);

/** The team's hub, typed: the one place the HUBS binding meets this class. */
export function hubStub(env: Pick<CairnEnv, 'HUBS'>, teamId: number): DurableObjectStub<HubDO> {
  const ns = env.HUBS;
  return countedStub(ns.get(ns.idFromName(hubName(teamId))), 'hub');
}
