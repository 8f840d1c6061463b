// Audit log: one helper every module uses to record admin actions, token anomalies and forget calls
// (the queries live in src/db/audit.ts).
export { insertAudit, redactionAudit, writeAudit, type AuditEntry } from '../db/audit';
