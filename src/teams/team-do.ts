// TeamDO: one per team; observer concurrency cap and shared back-off, rate limits, live hub.
import { DurableObject } from 'cloudflare:workers';
import type { CairnEnv } from '../env';

export class TeamDO extends DurableObject<CairnEnv> {
  async ping(): Promise<string> {
    return 'ok';
  }
}
