// A fake Messages API (Anthropic) and chat-completions API (OpenAI-compatible) on 127.0.0.1 for tests.
// Behaviour is scripted per scenario: any request whose body contains `SCENARIO:<id>` is answered from that
// scenario's queue (then by the default observer behaviour). Tests script and inspect scenarios over HTTP:
//   POST /__scenario/<id>  {responses?: FakeResponse[], delayMs?: number, hold?: boolean, reword?: boolean}   (replaces the script)
//   POST /__scenario/<id>/release   (answers the held requests; later ones are answered at once)
//   GET  /__scenario/<id>  → {requests: RecordedRequest[]}
//   GET  /__scenario/<id>?arrived=<n>   (the same, answered once n requests have arrived: no polling)
//   POST /__webhook/<id>   a Slack-compatible webhook receiver: recorded in scenario <id>, answered by its next
//                          scripted status (default 200 `ok`)
// `hold` keeps every request of the scenario unanswered until released: a test sees a turn in flight for as
// long as it needs, instead of hoping a delay outlasts its own steps on a loaded machine. `reword` makes the
// default observer tell the same calls differently on every request (its titles and narratives name the
// request's number), as a real model does when a turn is observed again.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeResponse {
  status?: number;
  /** Reply text for a 200. Omitted → the default observer reply for the request. */
  text?: string;
  headers?: Record<string, string>;
  /** Error body `error` object for non-200 answers. */
  error?: { type: string; message: string; details?: Record<string, unknown> };
  delayMs?: number;
  /** Token counts to report for a 200 (uncached input; cache reads and writes apart). Omitted → sized from the text. */
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
}

export interface RecordedRequest {
  path: string;
  at: number;
  /** When the answer was sent (same clock as `at`): orders requests without measuring durations. */
  answeredAt?: number;
  headers: Record<string, string>;
  body: unknown;
}

interface Scenario {
  responses: FakeResponse[];
  delayMs: number;
  requests: RecordedRequest[];
  /** Resolved by a release; null when requests are answered at once. */
  held: { until: Promise<void>; release: () => void } | null;
  /** Readers waiting for the scenario's n-th request (`?arrived=n`). */
  arrivals: { n: number; answer: () => void }[];
  /** Default replies name the request's number, so no two tellings of the same calls are alike. */
  reword: boolean;
}

/** The default reply told a `n`-th time: every title, narrative and summary field says which telling it is. */
export function reworded(text: string, n: number): string {
  return text.replace(/<\/(title|narrative|learned)>/g, ` (telling ${n})</$1>`);
}

function gate(): NonNullable<Scenario['held']> {
  let release = () => {};
  const until = new Promise<void>((resolve) => (release = resolve));
  return { until, release };
}

const blocks = (text: string) =>
  [...text.matchAll(/<observed_from_primary_session>([\s\S]*?)<\/observed_from_primary_session>/g)].map((m) => m[1]!);
const tag = (text: string, name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text)?.[1]?.trim() ?? '';

const SCRIPTED_SUMMARY =
  '<summary><request>Scripted request</request><investigated>The scripted session</investigated><learned>Fakes answer deterministically</learned><completed>Recorded the session</completed><next_steps>None</next_steps></summary>';

/**
 * A plausible observer: one observation per tool-use block, and a summary whenever the request asks for one,
 * also in a turn that asks for both (the summary last, as the observer prompt says).
 */
export function defaultReply(lastUser: string): string {
  const wantsSummary = /<summary>/.test(lastUser);
  if (wantsSummary && !/<what_happened>/.test(lastUser)) return SCRIPTED_SUMMARY;
  const out: string[] = [];
  for (const b of blocks(lastUser)) {
    const tool = tag(b, 'what_happened') || 'Tool';
    const params = tag(b, 'parameters').replace(/\s+/g, ' ').slice(0, 80);
    out.push(
      `<observation><type>discovery</type><title>${tool}: ${params.replace(/[<>&]/g, '')}</title>` +
        `<narrative>The agent used ${tool} with ${params.replace(/[<>&]/g, '')}.</narrative>` +
        '<facts><fact>Observed by the fake observer</fact></facts><concepts><concept>how-it-works</concept></concepts></observation>',
    );
  }
  if (wantsSummary) out.push(SCRIPTED_SUMMARY);
  return out.join('\n');
}

function lastUserText(body: unknown): string {
  const b = body as { messages?: { role: string; content: unknown }[] };
  const msgs = b.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((c: { text?: string }) => c.text ?? '').join('\n');
  }
  return '';
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeLlm(port = 0) {
  const scenarios = new Map<string, Scenario>();
  const scenario = (id: string) => {
    let s = scenarios.get(id);
    if (!s)
      scenarios.set(id, (s = { responses: [], delayMs: 0, requests: [], held: null, arrivals: [], reword: false }));
    return s;
  };
  let counter = 0;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${++counter}`, ...headers });
    res.end(JSON.stringify(body));
  };

  const server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const control = /^\/__scenario\/([\w-]+)(\/release)?$/.exec(url.pathname);
      if (control) {
        const s = scenario(control[1]!);
        if (control[2]) {
          s.held?.release();
          s.held = null;
          return send(res, 200, { ok: true });
        }
        if (req.method === 'POST') {
          const cfg = JSON.parse(raw || '{}') as {
            responses?: FakeResponse[];
            delayMs?: number;
            hold?: boolean;
            reword?: boolean;
          };
          s.responses = cfg.responses ?? [];
          s.delayMs = cfg.delayMs ?? 0;
          s.reword = cfg.reword === true;
          s.held?.release();
          s.held = cfg.hold ? gate() : null;
          return send(res, 200, { ok: true });
        }
        const n = Number(url.searchParams.get('arrived') ?? 0);
        if (s.requests.length < n) await new Promise<void>((answer) => s.arrivals.push({ n, answer }));
        return send(res, 200, { requests: s.requests, pending: s.responses.length });
      }
      // A Slack-compatible incoming webhook (the team digest): posts are recorded under the scenario named in the path
      // and answered `ok`, or with the status the scenario's next scripted response names.
      const hook = /^\/__webhook\/([\w-]+)$/.exec(url.pathname);
      if (hook && req.method === 'POST') {
        const s = scenario(hook[1]!);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        let body: unknown = raw;
        try {
          body = JSON.parse(raw);
        } catch {
          // kept as text
        }
        s.requests.push({ path: url.pathname, at: Date.now(), headers, body });
        s.arrivals = s.arrivals.filter((w) => (s.requests.length >= w.n ? (w.answer(), false) : true));
        const status = s.responses.shift()?.status ?? 200;
        res.writeHead(status, { 'content-type': 'text/plain' });
        return res.end(status === 200 ? 'ok' : 'invalid_payload');
      }
      const isAnthropic = url.pathname.endsWith('/v1/messages');
      const isOpenAi = url.pathname.endsWith('/chat/completions');
      if (!isAnthropic && !isOpenAi)
        return send(res, 404, { error: { type: 'not_found_error', message: 'no such route' } });

      const body = JSON.parse(raw) as Record<string, unknown>;
      const id = /SCENARIO:([\w-]+)/.exec(raw)?.[1] ?? 'default';
      const s = scenario(id);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const record: RecordedRequest = { path: url.pathname, at: Date.now(), headers, body };
      s.requests.push(record);
      s.arrivals = s.arrivals.filter((w) => (s.requests.length >= w.n ? (w.answer(), false) : true));
      const scripted = s.responses.shift() ?? {};
      if (s.held) await s.held.until;
      const delay = scripted.delayMs ?? s.delayMs;
      if (delay) await new Promise((r) => setTimeout(r, delay));
      // Set before any byte of the answer leaves, so a request caused by this answer always comes later.
      record.answeredAt = Date.now();

      const status = scripted.status ?? 200;
      if (status !== 200) {
        const error = scripted.error ?? { type: 'api_error', message: 'scripted failure' };
        return send(
          res,
          status,
          isAnthropic ? { type: 'error', error, request_id: `req_fake_${counter}` } : { error },
          scripted.headers,
        );
      }
      const told = defaultReply(lastUserText(body));
      const text = scripted.text ?? (s.reword ? reworded(told, s.requests.indexOf(record) + 1) : told);
      const model = String(body.model ?? 'fake-model');
      if (isAnthropic) {
        return send(
          res,
          200,
          {
            id: `msg_fake_${counter}`,
            type: 'message',
            role: 'assistant',
            model,
            content: text ? [{ type: 'text', text }] : [],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: scripted.usage
              ? {
                  input_tokens: scripted.usage.input,
                  output_tokens: scripted.usage.output,
                  cache_creation_input_tokens: scripted.usage.cacheWrite ?? 0,
                  cache_read_input_tokens: scripted.usage.cacheRead ?? 0,
                }
              : {
                  input_tokens: Math.ceil(raw.length / 4),
                  output_tokens: Math.ceil(text.length / 4),
                  cache_creation_input_tokens: 0,
                  cache_read_input_tokens: 0,
                },
          },
          scripted.headers,
        );
      }
      return send(
        res,
        200,
        {
          id: `chatcmpl_fake_${counter}`,
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          // OpenAI counts cached prompt tokens inside prompt_tokens and names them apart in prompt_tokens_details.
          usage: scripted.usage
            ? {
                prompt_tokens: scripted.usage.input + (scripted.usage.cacheRead ?? 0),
                completion_tokens: scripted.usage.output,
                total_tokens: 0,
                prompt_tokens_details: { cached_tokens: scripted.usage.cacheRead ?? 0 },
              }
            : {
                prompt_tokens: Math.ceil(raw.length / 4),
                completion_tokens: Math.ceil(text.length / 4),
                total_tokens: 0,
              },
        },
        scripted.headers,
      );
    } catch (err) {
      send(res, 500, { error: { type: 'api_error', message: String(err) } });
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  server.unref();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}
