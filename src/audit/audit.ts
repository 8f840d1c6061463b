// Audit log: one helper every module uses to record admin actions, token anomalies and forget calls.

export interface AuditEntry {
  teamId: number;
  /** The user who acted; null for the operator or an unauthenticated anomaly. */
  actorUserId: number | null;
  /** Stable dotted name, e.g. `user.add`, `token.revoke`, `token.revoked_used`, `forget`. */
  action: string;
  /** What was acted on, e.g. `user:12`, `token:34`, `project:github.com/acme/w`, `observation:9`. */
  target?: string | null;
  detail?: Record<string, unknown>;
  /** Defaults to Date.now(); pass it when the caller already holds a clock. */
  at?: number;
}

/** The prepared INSERT, for callers that want it inside their own `db.batch([...])`. */
export function auditStatement(db: D1Database, e: AuditEntry): D1PreparedStatement {
  return db
    .prepare('INSERT INTO audit_log (team_id, actor_user_id, action, target, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)')
    .bind(e.teamId, e.actorUserId, e.action, e.target ?? null, JSON.stringify(e.detail ?? {}), e.at ?? Date.now());
}

export async function writeAudit(db: D1Database, e: AuditEntry): Promise<void> {
  await auditStatement(db, e).run();
}
