// Wire types of the health routes (GET /api/admin/health, GET /api/admin/teams/health, GET /api/observer/state).
// Times are ms epoch. Nothing here carries memory text: counts, times, states and the provider's error codes.
import type { BudgetJson, UsageReport } from '#shared/wire/usage';
import type { BackoffKind, ObserverState } from '../slots/observer-health';

/** D1's size limit per database (Workers Paid), in bytes: 10 GB. */
export const D1_LIMIT_BYTES = 10 * 1000 ** 3;

/** What every device may read about its team's observer (`cairn status`, the status line, the viewer). */
export interface ObserverStateJson {
  state: ObserverState;
  kind: BackoffKind | null;
  /** The provider's error, e.g. `401 authentication_error`. */
  code: string | null;
  since: number | null;
  retry_at: number | null;
  pending: number;
  oldest_pending_at: number | null;
  /** One sentence for the user when memory is paused, delayed or behind (null when all is well). */
  notice: string | null;
}

export interface MaintenanceJson {
  job: string;
  started_at: number;
  finished_at: number | null;
  ok: boolean | null;
  error: string | null;
  detail: Record<string, unknown>;
}

export interface ShardJson {
  binding: string;
  size_bytes: number | null;
  limit_bytes: number;
  /** size / limit, 0–1 (null when the size is unknown). */
  used: number | null;
}

/** One team, as its admins see it (GET /api/admin/health) and in the operator's list. */
export interface TeamHealthJson {
  team: string;
  observer: ObserverStateJson & {
    provider: UsageReport['observer']['provider'];
    model: string | null;
    detail: string | null;
    last_ok_at: number | null;
  };
  events: { sessions: number; pending: number; oldest_pending_at: number | null; oldest_age_ms: number | null };
  dead_letters: { retryable: number; retired: number };
  /** Records the embedder refused 3 times: skipped, so search finds them by keyword only. */
  vectors: { skipped: number };
  budget: BudgetJson | null;
  retention: { days: number | null; last_sweep: { at: number; detail: Record<string, unknown> } | null };
  maintenance: MaintenanceJson[];
  shard: ShardJson;
  /** The team's digest (src/digest/): null when it set no webhook. `error` and `failing_since` while it fails. */
  digest: DigestHealthJson | null;
}

export interface DigestHealthJson {
  schedule: 'daily' | 'weekly';
  /** The period last tried (`2026-12-04`, `2026-W49`), and how many attempts it took so far. */
  period: string | null;
  attempts: number;
  last_attempt_at: number | null;
  last_sent_at: number | null;
  failing_since: number | null;
  error: string | null;
}

/** The operator's view (GET /api/admin/teams/health, CAIRN_ADMIN_SECRET): every database and a page of teams. */
export interface OperatorHealthJson {
  teams: TeamHealthJson[];
  /** `?cursor=` of the next page of teams; null on the last. */
  next_cursor: string | null;
  shards: (ShardJson & { teams: number })[];
  maintenance: MaintenanceJson[];
}
