// HubDO: one per team; fans out new observations and summaries to connected viewers.
import { DurableObject } from 'cloudflare:workers';
import type { CairnEnv } from '../env';
import type { StoredNotice } from './notify';

export class HubDO extends DurableObject<CairnEnv> {
  async ping(): Promise<string> {
    return 'ok';
  }

  /** Called by notifyStored. */
  async publish(teamId: number, notices: StoredNotice[]): Promise<number> {
    void teamId;
    void notices;
    return 0;
  }
}
