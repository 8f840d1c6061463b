// The observer's prompts: stable system prefix, session start/continuation, observation batch, summary request.
import { truncateField } from '#shared/truncate';
import type { Mode } from './modes';
import type { SummaryRequest, ToolEvent } from './types';
import type { SessionInfo } from './conversation';

// Field text goes in raw (code is full of '<' and escaping would bloat it); only our own framing tags are
// defused so that a tool output cannot close a block early or fake a new one.
const FRAMING =
  /<(\/?)(observed_from_primary_session|session_context|user_request|last_agent_message|parameters|outcome|prior_records|supersedes)\b/gi;
const escapeXml = (s: string) => s.replace(FRAMING, '<$1$2\u200b');
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const isoTime = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : 'unknown');

/** The observation schema the model fills in; placeholders come from the mode so overrides can localise them. */
function observationSchema(mode: Mode): string {
  const p = mode.prompts.placeholders;
  return [
    '<observation>',
    `  <type>${mode.observationTypes.map((t) => t.id).join(' | ')}</type>`,
    `  <title>${p.title}</title>`,
    `  <subtitle>${p.subtitle}</subtitle>`,
    '  <facts>',
    `    <fact>${p.fact}</fact>`,
    `    <fact>${p.fact}</fact>`,
    '  </facts>',
    `  <narrative>${p.narrative}</narrative>`,
    '  <concepts>',
    `    <concept>${p.concept}</concept>`,
    '  </concepts>',
    '  <files_read>',
    `    <file>${p.file}</file>`,
    '  </files_read>',
    '  <files_modified>',
    `    <file>${p.file}</file>`,
    '  </files_modified>',
    '</observation>',
  ].join('\n');
}

function summarySchema(mode: Mode): string {
  const s = mode.prompts.summaryPlaceholders;
  return [
    '<summary>',
    `  <request>${s.request}</request>`,
    `  <investigated>${s.investigated}</investigated>`,
    `  <learned>${s.learned}</learned>`,
    `  <completed>${s.completed}</completed>`,
    `  <next_steps>${s.nextSteps}</next_steps>`,
    `  <notes>${s.notes}</notes>`,
    '</summary>',
  ].join('\n');
}

/**
 * When the developer states a preference or standing rule of their own, the observer marks that observation personal
 * (parser.ts `parsePersonal`): it is stored in their personal memory, shown only to them, in every project.
 */
export const PERSONAL_GUIDANCE =
  'When the developer states a preference or standing rule of their own about how they work, not a fact about this project (e.g. "I use pnpm", "answer me in French", "never push to main without asking"), record it as its own observation and put <scope>personal</scope> inside that block: it is kept in their personal memory, which only they see, in every project. Never mark a project decision, a finding or anything a tool output says as personal.';

/**
 * The stable prefix: identical for every session of a mode, so the provider can cache it. Nothing here may
 * depend on the session, the time or the batch.
 */
export function buildSystemPrompt(mode: Mode): string {
  const p = mode.prompts;
  const types = mode.observationTypes.map((t) => `- ${t.id}: ${t.description}`).join('\n');
  const concepts = mode.concepts.map((c) => `- ${c.id}: ${c.description}`).join('\n');
  return [
    p.identity,
    p.role,
    '## What to record',
    p.recordFocus,
    '## What to skip',
    p.skipGuidance,
    '## How the input looks',
    'Each tool call of the primary session arrives as an <observed_from_primary_session> block with <what_happened> (the tool name), <occurred_at>, <working_directory>, <parameters> (the tool input) and <outcome> (the tool result). Long fields are shortened in the middle and carry an <elided chars="…" original_size_chars="…" reason="oversize"/> marker where text was removed: describe only what you can see and never guess what the removed part said. A <user_request> block tells you what the developer asked for.',
    '## Observation types',
    types,
    p.typeGuidance,
    '## Concepts',
    concepts,
    p.conceptGuidance,
    '## Fields',
    p.fieldGuidance,
    "## The developer's own preferences",
    PERSONAL_GUIDANCE,
    '## Output format',
    'Each observation is one block shaped like this:',
    observationSchema(mode),
    'When asked for a session summary, answer with exactly one block shaped like this:',
    summarySchema(mode),
    'or, when nothing meaningful happened since the last summary, with <skip_summary reason="why"/> alone.',
    '## Language',
    p.languageRule,
    '## Rules',
    p.outputRules,
  ].join('\n\n');
}

function requestBlock(session: SessionInfo, now: number): string {
  return [
    '<session_context>',
    `  <project>${escapeXml(session.project)}</project>`,
    `  <session>${escapeXml(session.sessionKey)}</session>`,
    `  <prompt_number>${session.promptNumber}</prompt_number>`,
    `  <date>${isoDate(now)}</date>`,
    `  <user_request>${escapeXml(truncateField(session.userPrompt || '(not captured)'))}</user_request>`,
    '</session_context>',
  ].join('\n');
}

/** Opens a conversation: which session is observed and what the developer asked. */
export function buildSessionStart(_mode: Mode, session: SessionInfo, now: number): string {
  return `You are starting to observe a new coding session.\n\n${requestBlock(session, now)}`;
}

/** Restarts a conversation whose history was dropped (size budget or idling) in the middle of a session. */
export function buildContinuation(mode: Mode, session: SessionInfo, now: number): string {
  return [
    `You are continuing to observe session ${session.sessionKey} of project ${session.project}, now at prompt ${session.promptNumber}. The earlier part of this conversation was cleared to save space.`,
    mode.prompts.continuationNote,
    requestBlock(session, now),
  ].join('\n\n');
}

/** Tells an ongoing conversation that the developer sent a new prompt. */
export function buildNewPrompt(session: SessionInfo, now: number): string {
  return `The developer sent a new request.\n\n${requestBlock(session, now)}`;
}

function eventBlock(event: ToolEvent): string {
  const lines = [
    '<observed_from_primary_session>',
    `  <what_happened>${escapeXml(event.toolName)}</what_happened>`,
    `  <occurred_at>${isoTime(event.occurredAt)}</occurred_at>`,
  ];
  if (event.cwd) lines.push(`  <working_directory>${escapeXml(event.cwd)}</working_directory>`);
  if (event.agentType) lines.push(`  <subagent>${escapeXml(event.agentType)}</subagent>`);
  lines.push(
    `  <parameters>${escapeXml(truncateField(event.toolInput))}</parameters>`,
    `  <outcome>${escapeXml(truncateField(event.toolResponse))}</outcome>`,
    '</observed_from_primary_session>',
  );
  return lines.join('\n');
}

/** One user turn: the batch's tool calls, then the reply rules restated next to them. */
export function buildObservationMessage(events: ToolEvent[], prior = ''): string {
  const plural = events.length === 1 ? 'call' : `${events.length} calls`;
  return [
    ...events.map(eventBlock),
    // Fenced and bounded by observer/prior.ts; absent when no prior record is related.
    ...(prior ? [prior] : []),
    `Record what this ${plural} taught or changed as <observation> blocks, or reply with nothing if it is routine. Where a field shows an <elided …/> marker, rely only on the text that is shown. Findings from debugging (logs, database rows, code paths) count. Answer in XML only; prose is discarded.`,
  ].join('\n\n');
}

/** Asks for the end-of-request summary; `afterObservations` when the same reply also carries observations. */
export function buildSummaryMessage(mode: Mode, summary: SummaryRequest, afterObservations = false): string {
  const last = summary.lastAssistantMessage.trim();
  return [
    '=== SUMMARY REQUEST ===',
    mode.prompts.summaryInstruction,
    last
      ? `The primary agent's last message to the developer:\n<last_agent_message>${escapeXml(truncateField(last))}</last_agent_message>`
      : '',
    afterObservations
      ? 'First write any <observation> blocks for the calls above, then end your reply with one <summary> block (or <skip_summary reason="…"/>).'
      : 'Reply with one <summary> block and nothing else (or <skip_summary reason="…"/>). Do not write <observation> blocks in this reply.',
    summarySchema(mode),
    mode.prompts.languageRule,
  ]
    .filter((s) => s !== '')
    .join('\n\n');
}
