// Isolation-suite helpers: a snapshot of everything a team owns, response normalisation, an MCP caller.
import { env } from 'cloudflare:workers';
import { call } from '../support/http';

/** Every row of the team that a foreign request could change, as one comparable string. */
export async function teamSnapshot(teamId: number): Promise<string> {
  const q = (sql: string) => env.DB.prepare(sql).bind(teamId).all();
  const parts = await Promise.all([
    q(
      'SELECT id, project_id, session_id, type, title, narrative, deleted_at, superseded_by FROM observations WHERE team_id = ? ORDER BY id',
    ),
    q('SELECT id, project_id, session_id, request, deleted_at FROM summaries WHERE team_id = ? ORDER BY id'),
    q('SELECT id, project_id, session_id, prompt_number, text FROM prompts WHERE team_id = ? ORDER BY id'),
    q('SELECT id, session_key, project_id, prompt_count, ended_at FROM sessions WHERE team_id = ? ORDER BY id'),
    q('SELECT id, key, visibility, owner_user_id FROM projects WHERE team_id = ? ORDER BY id'),
    q('SELECT key, project_id FROM project_aliases WHERE team_id = ? ORDER BY key'),
    q('SELECT id, handle, role, removed_at FROM users WHERE team_id = ? ORDER BY id'),
    q('SELECT id, user_id, name FROM devices WHERE team_id = ? ORDER BY id'),
    q('SELECT id, scopes, revoked_at, expires_at FROM tokens WHERE team_id = ? ORDER BY id'),
    q('SELECT settings FROM teams WHERE id = ?'),
    q('SELECT observation_id, path, kind FROM observation_files WHERE team_id = ? ORDER BY observation_id, path'),
    q('SELECT kind, record_id, part, project_id FROM local_vectors WHERE team_id = ? ORDER BY kind, record_id, part'),
    q("SELECT id, action, target FROM audit_log WHERE team_id = ? AND action NOT LIKE 'token.%used' ORDER BY id"),
  ]);
  return JSON.stringify(parts.map((p) => p.results));
}

/** Status and body with the probed value (and volatile times) replaced, so two probes can be compared. */
export async function normalised(res: Response, values: (string | number)[]): Promise<string> {
  let body = (await res.text())
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<ISO>')
    .replace(/\b1\d{12}\b/g, '<MS>')
    .replace(/\d{1,2}:\d{2}\s?(am|pm|AM|PM)/g, '<TIME>');
  for (const v of values) {
    if (typeof v === 'number' && v < 1000) continue;
    body = typeof v === 'number' ? body.replace(new RegExp(`\\b${v}\\b`, 'g'), '<X>') : body.split(v).join('<X>');
  }
  return `${res.status} ${body}`;
}

export const isMissingRoute = async (res: Response) =>
  res.status === 404 && (await res.clone().text()).includes('No such route');

/**
 * Fails when the probe's route does not exist: a renamed or unmounted route answers every probe with the same
 * 404, which would make a cross-team check pass without checking anything.
 */
export async function expectRoute(res: Response, probe: string): Promise<void> {
  if (await isMissingRoute(res))
    throw new Error(`${probe}: no such route (${res.url || 'request'}); the probe checks nothing`);
}

export interface McpResult {
  status: number;
  text: string;
  json: unknown;
}

/** One stateless MCP JSON-RPC call; accepts a JSON or an SSE answer. */
export async function mcp(token: string, method: string, params: unknown): Promise<McpResult> {
  const res = await call('/mcp', {
    token,
    method: 'POST',
    json: { jsonrpc: '2.0', id: 1, method, params },
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
  });
  const text = await res.text();
  let json: unknown = null;
  const payload = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('')
    : text;
  try {
    json = JSON.parse(payload);
  } catch {}
  return { status: res.status, text: payload, json };
}

export interface McpTool {
  name: string;
  inputSchema?: { properties?: Record<string, unknown>; required?: string[] };
}

export async function mcpTools(token: string): Promise<McpTool[] | null> {
  const r = await mcp(token, 'tools/list', {});
  const tools = (r.json as { result?: { tools?: McpTool[] } } | null)?.result?.tools;
  return Array.isArray(tools) ? tools : null;
}
