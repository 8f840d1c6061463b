// The official MCP SDK client against the Worker in-process, for the trust tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import worker from '../../../src/index';
import { BASE } from '../support/http';

const contexts: ExecutionContext[] = [];
const inProcess = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const ctx = createExecutionContext();
  contexts.push(ctx);
  return worker.fetch(new Request(url, init), env, ctx);
};

/** Waits until everything the server deferred so far (waitUntil) has finished. */
export async function deferredWork(): Promise<void> {
  while (contexts.length) await waitOnExecutionContext(contexts.shift()!);
}

export async function connect(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: inProcess,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-trust-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

export type ToolText = { content: { type: string; text: string }[]; isError?: boolean };
export const callTool = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolText;
export const textOf = (r: ToolText) => r.content.map((c) => c.text).join('\n');
