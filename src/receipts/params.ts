// The session id an injection names (zod at the edge): recall's context routes and GET /api/receipts take it.
import * as z from 'zod';
import { isServerSessionKey } from '../db/write-policy';

/**
 * The agent's session id an injection goes into (its receipts: src/receipts/), as ingest takes it; absent from
 * older clients (nothing is recorded).
 */
export const SessionKey = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine((v) => !isServerSessionKey(v), 'session ids starting with "manual:" or "import:" are made by the server');
