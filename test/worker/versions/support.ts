// Calling the Worker in process for the versions tests: HTTP routes and MCP tools through the SDK client, with
// every waitUntil (re-embedding after an edit) awaited before a test looks at storage.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import worker from '../../../src/index';
import { BASE } from '../support/http';

const contexts: ExecutionContext[] = [];

/** One request through the Worker's fetch, its deferred work awaited before it answers. */
export async function send(
  path: string,
  init: { token: string; json?: unknown; method?: string; headers?: Record<string, string>; body?: string },
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${init.token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${BASE}${path}`, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body }),
    env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

const inProcess = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const ctx = createExecutionContext();
  contexts.push(ctx);
  return worker.fetch(new Request(url, init), env, ctx);
};

export type ToolText = { content: { type: string; text: string }[]; isError?: boolean };

export async function tool(token: string, name: string, args: Record<string, unknown>): Promise<ToolText> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: inProcess,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-test', version: '0.0.0' });
  await client.connect(transport);
  try {
    return (await client.callTool({ name, arguments: args })) as ToolText;
  } finally {
    await client.close();
    while (contexts.length) await waitOnExecutionContext(contexts.shift()!);
  }
}

export const textOf = (r: ToolText) => r.content.map((c) => c.text).join('\n');

/** Stores a note through MCP `remember` and answers its id. */
export async function remember(token: string, project: string, title: string, text: string, extra = {}) {
  const r = await tool(token, 'remember', { project, title, text, ...extra });
  expect(r.isError, textOf(r)).toBeFalsy();
  return Number(/#(\d+)/.exec(textOf(r))?.[1]);
}

export async function json<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

export const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
