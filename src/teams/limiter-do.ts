// LimiterDO: one per token; counts requests in fixed windows for rate limiting.
import { DurableObject } from 'cloudflare:workers';
import type { CairnEnv } from '../env';

export class LimiterDO extends DurableObject<CairnEnv> {
  async ping(): Promise<string> {
    return 'ok';
  }
}
