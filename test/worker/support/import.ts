// Importing in tests: POST /api/admin/import answers 202 with an `import` job; `importNow` runs that job to its
// end (instead of waiting for the lane's alarms) and answers what the import did, as the client sees it after
// following the job: 200 {records, imported}, the job's error with its status, or the request's own
// refusal (4xx) unchanged.
import { env } from 'cloudflare:workers';
import { sha256Hex } from '../../../src/lib/crypto';
import type { WireJob } from '../../../src/shared/jobs';
import { call } from './http';
import { runJob } from './jobs';

/** The team a token belongs to (its job lane). */
export async function teamOfToken(token: string): Promise<number> {
  const row = await env.DB.prepare('SELECT team_id FROM tokens WHERE hash = ?')
    .bind(await sha256Hex(token))
    .first<{ team_id: number }>();
  if (!row) throw new Error('unknown token');
  return row.team_id;
}

export const postImport = (token: string, body: string | Uint8Array): Promise<Response> =>
  call('/api/admin/import', { token, method: 'POST', body, headers: { 'content-type': 'application/x-ndjson' } });

/** A job's failure code → the status the request would have answered for it. */
const STATUS: Record<string, number> = {
  unknown_session: 400,
  session_conflict: 409,
  project_key_unavailable: 409,
  import_conflict: 409,
};

export async function importNow(token: string, body: string | Uint8Array): Promise<Response> {
  const res = await postImport(token, body);
  if (res.status !== 202) return res;
  const sent = (await res.json()) as { records: number; job: WireJob };
  const job = await runJob(await teamOfToken(token), sent.job.id);
  if (job.status !== 'done') {
    return new Response(JSON.stringify({ error: job.error, job }), {
      status: STATUS[job.error?.code ?? ''] ?? 500,
      headers: { 'content-type': 'application/json' },
    });
  }
  return new Response(JSON.stringify(job.result), { status: 200, headers: { 'content-type': 'application/json' } });
}
