// Builds the MCP server for one request: the recall tools bound to the caller's identity.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { assertScope } from '../auth/scope';
import type { AuthContext } from '../auth/types';
import type { CairnEnv } from '../env';
import { AppError } from '../lib/errors';
import { parseWith } from '../lib/validate';
import { forgetRecord, parseRecordRef } from '../forget/service';
import { remember, RememberInput } from '../recall/memory-writes';
import { handoffFor } from '../handoff/service';
import {
  FeedbackBody,
  giveFeedback,
  recordFetched,
  REASON_MAX,
  supersede,
  SupersedeBody,
} from '../corrections/service';
import { DEFAULT_DEPTH, MAX_DEPTH } from '../recall/params';
import { renderTimeline } from '../recall/render-timeline';
import { MAX_IDS, observationRecords, timelineFor } from '../recall/service';
import { renderSearchText } from '../search/render';
import { promptRecords, summaryRecords } from '../search/records';
import { searchObservations } from '../search/search';
import { indexObservations } from '../vectors/index-records';
import { neutralizePrefix } from '#shared/fence';
import { INSTRUCTIONS, SERVER_NAME, SERVER_VERSION } from './instructions';
import { renderRecords } from './render-records';
import { errorText, log } from '../lib/log';
import { registerVersionTools } from './version-tools';
import { EVIDENCE_VALUES } from '#shared/evidence';
import type { WireEvidence } from '#shared/wire/records';
import { recordRef } from '../search/render';
import { wireEvidence } from '../evidence/checkout';
import { recordMcpAnswer } from '../receipts/record';
import { teamDb } from '../db/shards';

export interface McpDeps {
  /** Runs work after the answer (vector upsert/removal); Workers pass ctx.waitUntil. */
  defer(work: Promise<unknown>): void;
  now(): number;
}

const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: t }],
  ...(isError ? { isError: true } : {}),
});

/** A text answer with the same facts as structured content (MCP `structuredContent`, checked by `outputSchema`). */
const textAnd = (t: string, structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: t }],
  structuredContent: structured,
});

/** Each record's evidence against the caller's last reported checkout of its project (src/shared/evidence.ts). */
const EvidenceOut = z.object({
  ref: z.string(),
  evidence: z.enum(EVIDENCE_VALUES),
  reasons: z.array(z.string()),
  missing_names: z.array(z.string()),
});
type EvidenceOut = z.infer<typeof EvidenceOut>;

const evidenceOut = (ref: string, e: WireEvidence): EvidenceOut => ({
  ref,
  evidence: e.value,
  reasons: e.reasons,
  missing_names: e.missing_names,
});

/** Files an answer's observations under the device's latest session (src/receipts/record.ts). */
const receipted = async (env: CairnEnv, auth: AuthContext, o: Parameters<typeof recordMcpAnswer>[2]) =>
  recordMcpAnswer(await teamDb(env, auth.teamId), auth, o);

/** Tool failures become readable tool errors (the agent can correct itself); unknown ones are logged. */
async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError) return text(`${err.code}: ${err.message}`, true);
    log('error', 'mcp tool failed', {
      message: errorText(err),
      stack: (err as Error).stack?.split('\n').slice(1, 6).join(' | '),
    });
    return text('internal_error: Something went wrong on our side.', true);
  }
}

function requireWrite(auth: AuthContext): void {
  assertScope(auth, ['ingest'], 'needed to change memory');
}

/** Read tools touch nothing and reach nothing outside this team's memory. */
const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

const oneOrMany = z.union([z.string(), z.array(z.string())]).optional();

/** A record reference from search or timeline: `12` / `#12` observation, `S12` session summary, `P12` prompt. */
const RecordRef = z.union([
  z.number().int().positive(),
  z.string().regex(/^#?[SsPp]?\d{1,15}$/, 'expected 12, "S12" or "P12"'),
]);
export type RecordRef = z.infer<typeof RecordRef>;

/** Splits refs into distinct observation, summary and prompt ids (pure). */
export function splitRefs(refs: RecordRef[]): { observations: number[]; summaries: number[]; prompts: number[] } {
  const out = { observations: [] as number[], summaries: [] as number[], prompts: [] as number[] };
  for (const ref of refs) {
    const s = String(ref).replace(/^#/, '');
    const list = /^[Ss]/.test(s) ? out.summaries : /^[Pp]/.test(s) ? out.prompts : out.observations;
    const id = Number(s.replace(/^[SsPp]/, ''));
    if (id > 0 && !list.includes(id)) list.push(id);
  }
  return out;
}

/** What every tool handler needs: the bindings, the caller, and the clock and background-work seams. */
interface ToolContext {
  env: CairnEnv;
  auth: AuthContext;
  deps: McpDeps;
}

export function buildMcpServer(env: CairnEnv, auth: AuthContext, deps: McpDeps): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, { instructions: INSTRUCTIONS });
  const ctx: ToolContext = { env, auth, deps };
  // Reading, in the order the instructions teach: find, look around, then fetch in full.
  registerSearch(server, ctx);
  registerTimeline(server, ctx);
  registerGetObservations(server, ctx);
  registerContinueSession(server, ctx);
  // Writing: both need the ingest scope.
  registerRemember(server, ctx);
  registerSupersede(server, ctx);
  registerFeedback(server, ctx);
  registerForget(server, ctx);
  // A record's versions: history (read), edit and revert (the ingest scope).
  registerVersionTools(server, {
    env,
    auth,
    defer: (w) => deps.defer(w),
    now: () => deps.now(),
    text,
    guarded,
    requireWrite,
    observationId,
  });
  return server;
}

/** Step 1: one line per match across observations (and summaries, prompts). */
function registerSearch(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'search',
    {
      title: 'Search memory',
      description:
        'Step 1: find observations (and, with kind, session summaries and your earlier prompts). Returns one line per match ' +
        '(id, time, type, title, project, author, token cost), not the bodies: #12 is an observation, S12 a session summary, P12 a prompt. ' +
        'Give a query, filters, or both. Matching is by words: start with two to four distinctive words (a function or file name, ' +
        'an error code, a library), not a whole sentence; rows holding all of them rank first. If that misses, search again with ' +
        'the words a record would more likely use (synonyms, the error text itself, the component name) before concluding nothing is stored. ' +
        'For "when" questions name the day ("on 2024-03-05", "yesterday"): records stored around it rank first, and each line shows its date.',
      inputSchema: {
        kind: z
          .enum(['observations', 'summaries', 'prompts', 'all'])
          .optional()
          .describe(
            'What to search (default observations); "all" also finds session summaries and user prompts. type, concept and file filters apply to observations only.',
          ),
        query: z
          .string()
          .max(1000)
          .optional()
          .describe(
            'A few distinctive words, a file name or error text, any language; e.g. "jwt refresh race" rather than "why did the login break?".',
          ),
        project: oneOrMany.describe('Project key(s), e.g. github.com/acme/widgets.'),
        type: oneOrMany.describe('Observation type(s), e.g. bugfix, decision.'),
        concept: oneOrMany.describe('Concept(s), e.g. gotcha, trade-off.'),
        file: oneOrMany.describe('File path(s) the observation read or modified.'),
        author: oneOrMany.describe("Teammates' handles."),
        platform: oneOrMany.describe('Agent(s) the work was done in: claude-code, codex, gemini.'),
        since: z.string().optional().describe('ISO date/time: only observations at or after it.'),
        until: z.string().optional().describe('ISO date/time: only observations at or before it.'),
        limit: z.number().int().min(1).max(100).optional().describe('Results per page (default 20).'),
        offset: z.number().int().min(0).max(900).optional().describe('Skip this many results (paging).'),
      },
      outputSchema: { results: z.array(EvidenceOut) },
      annotations: READ_ONLY,
    },
    (a) =>
      guarded(async () => {
        const res = await searchObservations(env, auth, {
          q: a.query,
          project: a.project,
          type: a.type,
          concept: a.concept,
          file: a.file,
          author: a.author,
          platform: a.platform,
          since: a.since,
          until: a.until,
          limit: a.limit,
          offset: a.offset,
          kind: a.kind,
        });
        // The observations it lists went into the agent's session: their receipts (src/receipts/).
        deps.defer(
          receipted(env, auth, {
            sent: res.results.filter((r) => r.kind === 'observation'),
            now: deps.now(),
          }),
        );
        const results = res.results.map((r) =>
          r.kind === 'observation'
            ? evidenceOut(recordRef(r.kind, r.id), wireEvidence(r.evidence))
            : {
                ref: recordRef(r.kind, r.id),
                evidence: 'unknown' as const,
                reasons: ['no_evidence'],
                missing_names: [],
              },
        );
        return textAnd(renderSearchText(res, a.offset ?? 0), { results });
      }),
  );
}

/** Step 2: what happened around one record. */
function registerTimeline(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'timeline',
    {
      title: 'Timeline around a record',
      description:
        'Step 2: what happened before and after one record. anchor = observation id, "S<id>" for a session summary, or an ISO time; ' +
        'or give query and the best match becomes the anchor.',
      inputSchema: {
        anchor: z.union([z.number().int().positive(), z.string().max(64)]).optional(),
        query: z.string().max(1000).optional(),
        before: z
          .number()
          .int()
          .min(0)
          .max(MAX_DEPTH)
          .optional()
          .describe(`Records before the anchor (default ${DEFAULT_DEPTH}).`),
        after: z
          .number()
          .int()
          .min(0)
          .max(MAX_DEPTH)
          .optional()
          .describe(`Records after the anchor (default ${DEFAULT_DEPTH}).`),
        project: oneOrMany.describe('Stay within these project key(s).'),
      },
      outputSchema: { items: z.array(EvidenceOut) },
      annotations: READ_ONLY,
    },
    (a) =>
      guarded(async () => {
        const projects = a.project === undefined ? [] : Array.isArray(a.project) ? a.project : [a.project];
        const { result, mode } = await timelineFor(env, auth, {
          anchor: a.anchor,
          q: a.query,
          before: a.before ?? DEFAULT_DEPTH,
          after: a.after ?? DEFAULT_DEPTH,
          projects,
        });
        // The anchor is what the session came for: counted as fetched (feedback, src/corrections/), and as used
        // when an injection had sent it to the session; the observations listed are the answer's receipts.
        const anchor = result.anchor.kind === 'observation' && result.anchor.id !== null ? [result.anchor.id] : [];
        if (anchor.length) deps.defer(recordFetched(env, auth, anchor, deps.now()));
        deps.defer(
          receipted(env, auth, {
            sent: result.items.filter((i) => i.kind === 'observation'),
            fetched: anchor,
            now: deps.now(),
          }),
        );
        const items = result.items.map((i) =>
          i.kind === 'observation'
            ? evidenceOut(`#${i.id}`, wireEvidence(i.evidence))
            : { ref: `S${i.id}`, evidence: 'unknown' as const, reasons: ['no_evidence'], missing_names: [] },
        );
        return textAnd(renderTimeline({ result, mode, viewer: auth.handle, timeZone: 'UTC' }), { items });
      }),
  );
}

/** Step 3: full records for chosen ids. */
function registerGetObservations(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'get_observations',
    {
      title: 'Full records',
      description:
        `Step 3: full records (narrative, facts, files) for ids you picked from search or timeline. Batch them: up to ${MAX_IDS} per call. ` +
        'Session summaries and prompts too: ids=["S12", "P7"] gives a summary in full (request, investigated, learned, completed, next steps) ' +
        'or a prompt\'s whole text; timeline(anchor="S12") shows what happened around a summary.',
      inputSchema: {
        ids: z.array(RecordRef).min(1).max(MAX_IDS).describe('Observation ids (12), "S12" summaries, "P12" prompts.'),
      },
      outputSchema: { records: z.array(EvidenceOut) },
      annotations: READ_ONLY,
    },
    (a) =>
      guarded(async () => {
        const refs = splitRefs(a.ids);
        const [{ records, mode }, summaries, prompts] = await Promise.all([
          observationRecords(env, auth, refs.observations),
          summaryRecords(env, auth, refs.summaries),
          promptRecords(env, auth, refs.prompts),
        ]);
        const has = (list: { id: number }[]) => new Set(list.map((r) => r.id));
        const [o, s, p] = [has(records), has(summaries), has(prompts)];
        const missing = [
          ...refs.observations.filter((id) => !o.has(id)),
          ...refs.summaries.filter((id) => !s.has(id)).map((id) => `S${id}`),
          ...refs.prompts.filter((id) => !p.has(id)).map((id) => `P${id}`),
        ];
        const fetched = records.map((r) => r.id);
        deps.defer(recordFetched(env, auth, fetched, deps.now()));
        // Fetched in full: used, where an injection had sent it to the session before; and sent by this answer.
        deps.defer(
          receipted(env, auth, {
            sent: records,
            fetched,
            now: deps.now(),
          }),
        );
        const structured = records.map((r) => evidenceOut(`#${r.id}`, r.evidence ?? wireEvidence(undefined)));
        return textAnd(renderRecords(records, missing, mode, 'UTC', { summaries, prompts }), { records: structured });
      }),
  );
}

/** Continue anywhere: where a session (the caller's own on another machine, or a teammate's) stopped. */
function registerContinueSession(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'continue_session',
    {
      title: 'Continue a session',
      description:
        'Pick up a coding session where it stopped, on another machine or from a teammate: what it was asked, what it did and ' +
        "decided, its unfinished todos and handoff notes, and the branch and commit it was at. Give session (the agent's session id, " +
        "yours or a teammate's of a team project), or last=true with project for your own latest session there.",
      inputSchema: {
        session: z.string().max(200).optional().describe("The agent's session id to continue."),
        last: z.boolean().optional().describe('Your own latest session in project (on any device).'),
        project: z.string().max(500).optional().describe('Project key, as in the context index (needed with last).'),
      },
      annotations: READ_ONLY,
    },
    (a) =>
      guarded(async () => {
        if (a.session ? a.last : !(a.last && a.project))
          throw new AppError(400, 'invalid_arguments', 'Give session, or last=true with project.');
        const h = await handoffFor(env, auth, {
          session: a.session,
          last: a.last === true,
          project: a.project,
          checkout: null,
          timeZone: 'UTC',
          maxChars: 6_000,
          now: deps.now(),
        });
        return text(h.text || `Session ${h.session} has nothing stored yet.`);
      }),
  );
}

/** Saves a note as an observation; idempotent on its text. */
function registerRemember(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'remember',
    {
      title: 'Remember',
      description:
        'Save something worth keeping for later sessions and teammates (a decision, a gotcha, a how-to) as an observation of a project. ' +
        'With scope "personal" it is the user\'s own memory instead (a preference or rule of theirs: "I use pnpm", "answer in French"): ' +
        "no project needed, it reaches their sessions in every project and nobody else's. Saving the same text twice stores it once.",
      inputSchema: {
        project: z
          .string()
          .optional()
          .describe(
            'Project key, as in the first line of the context index (e.g. github.com/acme/widgets). Not needed with scope personal.',
          ),
        scope: z
          .enum(['project', 'personal'])
          .optional()
          .describe("project (default): the team's memory of the project; personal: the user's own, in every project."),
        text: z.string().describe('What to remember, self-contained: it will be read without this conversation.'),
        title: z.string().optional().describe('Short title; defaults to the start of text.'),
        type: z.string().optional().describe('Observation type (default discovery), e.g. decision, bugfix, feature.'),
        concepts: z.array(z.string()).optional(),
        facts: z.array(z.string()).optional(),
        files: z.array(z.string()).optional().describe('Project-relative paths this is about.'),
        supersedes: z
          .array(z.union([z.number(), z.string()]))
          .optional()
          .describe(
            'Ids of observations this note corrects (e.g. [12]): they leave the context index and rank below it. Only their author or a team admin may.',
          ),
      },
      // Saving the same text twice stores it once, and nothing existing is changed.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (a) =>
      guarded(async () => {
        requireWrite(auth);
        const input = parseWith(RememberInput, a, 'invalid_arguments');
        const saved = await remember(env, auth, input, deps.now());
        if (!saved.duplicate) deps.defer(indexObservations(env, auth.teamId, [saved.id]));
        const corrected = saved.superseded.length
          ? ` It supersedes ${saved.superseded.map((id) => `#${id}`).join(', ')}.`
          : '';
        const where = saved.scope === 'personal' ? 'your personal memory' : neutralizePrefix(saved.project, 300);
        return text(
          `${saved.duplicate ? 'Already remembered' : 'Remembered'} as #${saved.id} in ${where}.${corrected}`,
        );
      }),
  );
}

/** Marks a record outdated, optionally by the record that replaces it (its author or an admin). */
function registerSupersede(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'supersede',
    {
      title: 'Supersede',
      description:
        'Mark an observation as no longer true: it leaves the context index and ranks below its replacement in search, and its history ' +
        '(who, when, why) is kept. Give by = the id of the record that replaces it (store one with remember first), or leave it out to mark ' +
        'it outdated. Only its author or a team admin may; anyone can flag a record with feedback instead. To delete for good, use forget.',
      inputSchema: {
        id: z
          .union([z.number().int().positive(), z.string().max(20)])
          .describe('The outdated observation: 12 or "#12".'),
        by: z
          .union([z.number().int().positive(), z.string().max(20)])
          .optional()
          .describe('The observation that replaces it.'),
        reason: z.string().max(REASON_MAX).describe('Why it is no longer true, in a sentence.'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (a) =>
      guarded(async () => {
        requireWrite(auth);
        const input = parseWith(
          SupersedeBody,
          {
            id: observationId(a.id, 'id'),
            by: a.by === undefined ? undefined : observationId(a.by, 'by'),
            reason: a.reason,
          },
          'invalid_arguments',
        );
        const done = await supersede(env, auth, input, deps.now());
        return text(
          done.by === null
            ? `Marked #${done.id} outdated; it is out of the context index.`
            : `#${done.id} is superseded by #${done.by}; it is out of the context index and ranks below #${done.by}.`,
        );
      }),
  );
}

/** Feedback on a record: wrong or outdated (up for review, out of the context index meanwhile) or useful. */
function registerFeedback(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'feedback',
    {
      title: 'Feedback on a record',
      description:
        'Say whether an observation you were given was right. wrong or outdated: it leaves the context index until a team admin reviews it. ' +
        'useful: it ranks a little higher in search. Anyone in the team may; once per record and kind.',
      inputSchema: {
        id: z.union([z.number().int().positive(), z.string().max(20)]).describe('The observation: 12 or "#12".'),
        kind: z.enum(['wrong', 'outdated', 'useful']),
        reason: z.string().max(REASON_MAX).optional().describe('What is wrong or outdated about it, in a sentence.'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (a) =>
      guarded(async () => {
        requireWrite(auth);
        const input = parseWith(
          FeedbackBody,
          { id: observationId(a.id, 'id'), kind: a.kind, reason: a.reason },
          'invalid_arguments',
        );
        const done = await giveFeedback(env, auth, input, deps.now());
        if (!done.counted) return text(`You already said #${done.id} is ${done.kind}.`);
        return text(
          done.kind === 'useful'
            ? `Noted: #${done.id} was useful.`
            : `Flagged #${done.id} as ${done.kind}; it is out of the context index until an admin reviews it.`,
        );
      }),
  );
}

/** `12` or `#12` → 12; anything else a readable tool error. */
function observationId(ref: number | string, field: string): number {
  const m = typeof ref === 'number' ? [String(ref), String(ref)] : /^\s*#?(\d{1,15})\s*$/.exec(ref);
  const id = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0)
    throw new AppError(400, 'invalid_arguments', `${field}: give an observation id such as 12.`);
  return id;
}

/** Deletes one record from every index (its author or an admin). */
function registerForget(server: McpServer, { env, auth, deps }: ToolContext): void {
  server.registerTool(
    'forget',
    {
      title: 'Forget',
      description:
        'Delete a record from memory for good: an observation (#12 or 12), a summary (S12) or a prompt (P12). Its text is removed from every index; only an audit entry (who, which id, when) stays. Only its author or a team admin may.',
      inputSchema: {
        id: z
          .union([z.number().int().positive(), z.string().max(20)])
          .describe('The record id as search shows it: 12, S12 or P12.'),
        reason: z.string().max(500).optional().describe('Why (not stored: it could repeat what is forgotten).'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (a) =>
      guarded(async () => {
        requireWrite(auth);
        const ref = parseRecordRef(a.id);
        if (!ref) throw new AppError(400, 'invalid_arguments', 'id: give a record id such as 12, S12 or P12.');
        const gone = await forgetRecord(env, auth, ref.kind, ref.id, deps.now());
        return text(
          `Forgot ${ref.kind === 'observation' ? '#' : ref.kind === 'summary' ? 'S' : 'P'}${ref.id}; it is deleted from every index.`,
        );
      }),
  );
}
