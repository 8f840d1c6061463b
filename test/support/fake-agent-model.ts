// A scripted model for the real Claude Code CLI: the Messages API as Claude Code calls it (streaming SSE with
// text and tool_use blocks, `/v1/messages/count_tokens`), on 127.0.0.1. Not the observer fake (fake-llm.ts):
// that one answers cairn's own observer with whole messages; this one drives an agent through a script.
//
// A script is chosen by a `SCENARIO:<id>` marker anywhere in the request (the test puts it in the prompt).
// Its turns are indexed by how many assistant messages the conversation already holds, so the answer depends
// only on the conversation, never on how many side requests (titles, summaries) Claude Code made before.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown> };

export interface AgentRequest {
  path: string;
  /** The request body as Claude Code sent it. */
  body: {
    model?: string;
    stream?: boolean;
    system?: unknown;
    messages?: Array<{ role: string; content: unknown }>;
    tools?: Array<{ name: string }>;
  };
  raw: string;
  scenario: string | null;
}

export interface FakeAgentModel {
  url: string;
  requests: AgentRequest[];
  /** Replaces the turns of one scenario. */
  script(id: string, turns: ScriptBlock[][]): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** The SSE events of one assistant message, the way the Messages API streams it. */
export function sseEvents(id: string, model: string, blocks: ScriptBlock[], inputTokens: number): string {
  const out: string[] = [];
  const ev = (type: string, data: Record<string, unknown>) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  let outputTokens = 0;
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
      outputTokens += tokens(b.text);
    } else {
      const json = JSON.stringify(b.input);
      ev('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: `toolu_${id}_${index}`, name: b.name, input: {} },
      });
      // Split in two, as the real API streams partial JSON.
      const cut = Math.floor(json.length / 2);
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(0, cut) } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(cut) } });
      outputTokens += tokens(json);
    }
    ev('content_block_stop', { index });
  });
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: outputTokens } });
  ev('message_stop', {});
  return out.join('');
}

export async function startFakeAgentModel(): Promise<FakeAgentModel> {
  const scripts = new Map<string, ScriptBlock[][]>();
  const requests: AgentRequest[] = [];
  let counter = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_agent_${++counter}` });
    res.end(JSON.stringify(body));
  };
  const server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = (raw ? JSON.parse(raw) : {}) as AgentRequest['body'];
      const scenario = /SCENARIO:([\w-]+)/.exec(raw)?.[1] ?? null;
      requests.push({ path: url.pathname, body, raw, scenario });
      if (url.pathname.endsWith('/v1/messages/count_tokens')) return json(res, 200, { input_tokens: tokens(raw) });
      if (!url.pathname.endsWith('/v1/messages'))
        return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'no such route' } });

      // Side requests (no tools offered: titles, topic checks) get a short plain answer.
      const isAgentLoop = Array.isArray(body.tools) && body.tools.length > 0;
      const turn = (body.messages ?? []).filter((m) => m.role === 'assistant').length;
      const script = scenario ? scripts.get(scenario) : undefined;
      const blocks: ScriptBlock[] =
        isAgentLoop && script
          ? (script[turn] ?? [{ type: 'text', text: 'Done.' }])
          : [{ type: 'text', text: 'Scripted side answer.' }];
      const id = `msg_agent_${++counter}`;
      const model = String(body.model ?? 'claude-fake');
      if (body.stream) {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          'request-id': `req_agent_${counter}`,
        });
        res.end(sseEvents(id, model, blocks, tokens(raw)));
        return;
      }
      const content = blocks.map((b, i) =>
        b.type === 'text' ? b : { type: 'tool_use', id: `toolu_${id}_${i}`, name: b.name, input: b.input },
      );
      json(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: tokens(raw),
          output_tokens: 10,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      });
    } catch (err) {
      json(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    script: (id, turns) => void scripts.set(id, turns),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
