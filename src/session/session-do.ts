// SessionDO: one per agent session; durable event buffer and observer loop (filled in by the pipeline work).
import { DurableObject } from 'cloudflare:workers';
import type { CairnEnv } from '../env';

export class SessionDO extends DurableObject<CairnEnv> {
  async ping(): Promise<string> {
    return 'ok';
  }
}
