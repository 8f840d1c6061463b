// HubDO: one per team; fans out new observations and summaries to connected viewers.
import { DurableObject } from 'cloudflare:workers';
import type { CairnEnv } from '../env';

export class HubDO extends DurableObject<CairnEnv> {
  async ping(): Promise<string> {
    return 'ok';
  }
}
