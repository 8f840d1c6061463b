// Live notifications: the store calls notifyStored after a turn is saved; the team's HubDO fans it out.
import type { CairnEnv } from '../env';
import { hubStub, type StoredNotice } from './hub-do';
import { errorText, log } from '../lib/log';

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
    const hub = hubStub(env, teamId);
    await hub.publish(teamId, notices);
  } catch (err) {
    log('warn', 'live notify failed', { team_id: teamId, count: notices.length, message: errorText(err) });
  }
}
