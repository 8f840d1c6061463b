// `cairn mcp-stdio`: cairn's MCP server as a local stdio server, for agents whose configuration would
// otherwise hold the token (Codex, Gemini CLI). Each JSON-RPC line from the agent is POSTed to the server's
// /mcp with the token from cairn's own config; each answer goes back as one line.
import { loadConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { VERSION } from '../version';

/** One message's answers as lines: a JSON body, or the `data:` events of an SSE body; none for a notification. */
export function answerLines(contentType: string, body: string): string[] {
  if (!body.trim()) return [];
  if (contentType.includes('text/event-stream')) {
    return body
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .filter(Boolean);
  }
  return [JSON.stringify(JSON.parse(body))];
}

const idOf = (line: string): unknown => {
  try {
    const v = JSON.parse(line) as { id?: unknown };
    return v && typeof v === 'object' ? v.id : undefined;
  } catch {
    return undefined;
  }
};

/** A JSON-RPC error for a request the server could not answer (a notification gets none). */
function errorLine(line: string, message: string): string[] {
  const id = idOf(line);
  return id === undefined || id === null
    ? []
    : [JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } })];
}

export interface Bridge {
  url: string;
  token: string;
  device: string | null;
  fetch: typeof fetch;
}

/** Forwards one line; resolves to the lines to write back. */
export async function forward(b: Bridge, line: string, protocolVersion: { value: string | null }): Promise<string[]> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${b.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'user-agent': `cairn-client/${VERSION}`,
  };
  if (b.device) headers['x-cairn-device'] = b.device;
  if (protocolVersion.value) headers['mcp-protocol-version'] = protocolVersion.value;
  let res: Response;
  try {
    res = await b.fetch(`${b.url}/mcp`, { method: 'POST', headers, body: line, signal: AbortSignal.timeout(60_000) });
  } catch (e) {
    return errorLine(line, `cairn server unreachable: ${(e as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok && res.status !== 202)
    return errorLine(line, `cairn server answered ${res.status}: ${text.slice(0, 200)}`);
  let lines: string[];
  try {
    lines = answerLines(res.headers.get('content-type') ?? '', text);
  } catch {
    return errorLine(line, 'cairn server sent an answer that is not JSON');
  }
  // Later requests carry the protocol version the server chose at initialize, as the transport requires.
  for (const l of lines) {
    const v = (JSON.parse(l) as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    if (typeof v === 'string') protocolVersion.value = v;
  }
  return lines;
}

/** The command: reads lines from stdin until it closes, one request at a time (answers stay in order). */
export async function mcpStdio(_args: string[], io: Io): Promise<number> {
  const config = loadConfig(io.env, pathsFor(io.env));
  if (!config.url || !config.token) {
    io.err('cairn mcp-stdio: not logged in (run: cairn login --url … --token …)\n');
    return 1;
  }
  const bridge: Bridge = { url: config.url, token: config.token, device: config.device, fetch };
  const version = { value: null as string | null };
  const { createInterface } = process.getBuiltinModule('node:readline');
  for await (const raw of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const line = raw.trim();
    if (!line) continue;
    for (const out of await forward(bridge, line, version)) io.out(`${out}\n`);
  }
  return 0;
}
