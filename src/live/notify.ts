// Live notifications: the store calls notifyStored after a turn is saved; the team's HubDO fans it out.
import type { CairnEnv } from '../env';

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

/**
 * Tells the team's live viewers about newly stored rows. Call it through waitUntil after the store
 * commits. It never throws: live updates are best-effort and must not fail or retry a store.
 */
export async function notifyStored(
  env: Pick<CairnEnv, 'HUBS'>,
  teamId: number,
  payload: StoredNotice | readonly StoredNotice[],
): Promise<void> {
  const notices = Array.isArray(payload) ? [...payload] : [payload as StoredNotice];
  if (notices.length === 0) return;
  try {
    const hub = env.HUBS.get(env.HUBS.idFromName(hubName(teamId)));
    await hub.publish(teamId, notices);
  } catch (err) {
    console.warn('live notify failed', { teamId, count: notices.length, message: (err as Error).message });
  }
}
