// Observer without an LLM: deterministic observations from the tool calls themselves (the offline default).
import type { ObserverProvider, ObserverReply, ObserverRequest, SummaryRequest, ToolEvent } from '../types';
import type { ObservationContent } from '#shared/wire/records';
import { extractFileEvidence } from '../evidence';
import { pathInsideRoot, relativeToRoot } from '#shared/paths';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const oneLine = (s: string, max = 120) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** Where a command ran, without the machine-specific prefix: team memory must read the same on every checkout. */
function where(e: ToolEvent): string {
  if (!e.cwd) return 'the project';
  if (!e.projectRoot) return e.cwd;
  const inside = pathInsideRoot(e.projectRoot, e.cwd);
  if (inside) return inside;
  // A file directly in cwd comes back as just its name only when cwd is the root itself.
  return pathInsideRoot(e.projectRoot, `${e.cwd}/x`) === 'x' ? 'the project root' : e.cwd;
}

type Json = Record<string, unknown>;
function asObject(text: string): Json | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** An observation before it is rendered as the observer's XML: title and narrative always written. */
interface Draft
  extends Pick<ObservationContent, 'type' | 'facts' | 'concepts'>,
    Partial<Pick<ObservationContent, 'filesRead' | 'filesModified'>> {
  title: string;
  subtitle?: string;
  narrative: string;
}

function render(d: Draft): string {
  const list = (tag: string, item: string, values: string[] | undefined) =>
    values && values.length ? `<${tag}>${values.map((v) => `<${item}>${esc(v)}</${item}>`).join('')}</${tag}>` : '';
  return [
    '<observation>',
    `<type>${d.type}</type>`,
    `<title>${esc(d.title)}</title>`,
    d.subtitle ? `<subtitle>${esc(d.subtitle)}</subtitle>` : '',
    list('facts', 'fact', d.facts),
    `<narrative>${esc(d.narrative)}</narrative>`,
    list('concepts', 'concept', d.concepts),
    list('files_read', 'file', d.filesRead),
    list('files_modified', 'file', d.filesModified),
    '</observation>',
  ].join('');
}

const EDIT_TOOLS = new Set(['edit', 'multiedit', 'write', 'notebookedit', 'write_file', 'edit_file', 'create_file']);
const QUIET_TOOLS = new Set([
  'read',
  'read_file',
  'glob',
  'grep',
  'ls',
  'list_files',
  'notebookread',
  'webfetch',
  'websearch',
  'todowrite',
  'task',
  'agent',
  'bashoutput',
  'exitplanmode',
  'listmcpresourcestool',
  'askuserquestion',
  'skill',
  'slashcommand',
]);
// Commands that only look around: nothing is learned from their success alone.
const LOOKING =
  /^(?:cd|ls|ll|pwd|cat|head|tail|less|more|echo|printf|find|fd|grep|rg|ag|wc|which|whoami|tree|file|stat|du|df|env|printenv|date|true|clear|git (?:status|diff|log|show|branch|remote|rev-parse|blame|ls-files))\b/;
/** `cd app && ls` only looks; `cd app && npm test` does something: every segment must be a look-around. */
const onlyLooks = (command: string) =>
  command
    .split(/&&|\|\||;|\|/)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .every((part) => LOOKING.test(part));
const ERROR_TEXT =
  /\b(?:error|errors|failed|failure|failing|exception|traceback|panic|fatal|cannot|not found|denied|segmentation fault)\b|✗|✘/i;

interface CommandResult {
  command: string;
  description: string;
  exitCode: number | null;
  output: string;
  errorText: string;
  failed: boolean;
}

function readCommand(event: ToolEvent): CommandResult {
  const input = asObject(event.toolInput);
  const command = str(input?.command) || str(input?.cmd) || event.toolInput;
  const res = asObject(event.toolResponse);
  const stdout = res ? str(res.stdout) || str(res.output) : event.toolResponse;
  // Claude Code's PostToolUseFailure carries only `error` (e.g. "Exit code 1\n…"): it is the error output.
  const stderr = res ? str(res.stderr) || str(res.error) : '';
  const codeRaw = res?.exit_code ?? res?.exitCode ?? res?.returnCode ?? res?.code;
  const exitCode = typeof codeRaw === 'number' ? codeRaw : null;
  const flagged = res?.is_error === true || res?.isError === true || res?.interrupted === true;
  const errorLine = [stderr, stdout]
    .flatMap((t) => t.split('\n'))
    .map((l) => l.trim())
    .find((l) => ERROR_TEXT.test(l));
  const failed = exitCode !== null ? exitCode !== 0 : flagged || (stderr.trim() !== '' && ERROR_TEXT.test(stderr));
  return {
    command: oneLine(command, 200),
    description: str(input?.description),
    exitCode,
    output: oneLine(stdout || stderr, 200),
    errorText: errorLine ? oneLine(errorLine, 200) : oneLine(stderr || stdout, 200),
    failed,
  };
}

function commandDrafts(events: ToolEvent[]): Draft[] {
  const drafts: Draft[] = [];
  const failedBefore = new Set<string>();
  for (const event of events) {
    const r = readCommand(event);
    if (r.failed) {
      failedBefore.add(r.command);
      drafts.push({
        type: 'discovery',
        title: `Command failed: ${oneLine(r.command, 70)}`,
        subtitle: r.description || undefined,
        facts: [
          `\`${r.command}\` ${r.exitCode !== null ? `exited with code ${r.exitCode}` : 'reported an error'}`,
          ...(r.errorText ? [`Error output: ${r.errorText}`] : []),
        ],
        narrative: `Running \`${r.command}\` in ${where(event)} failed${r.exitCode !== null ? ` (exit code ${r.exitCode})` : ''}${r.errorText ? `: ${r.errorText}` : '.'}`,
        concepts: ['problem-solution', 'gotcha'],
      });
    } else if (failedBefore.has(r.command)) {
      failedBefore.delete(r.command);
      drafts.push({
        type: 'bugfix',
        title: `Now passing: ${oneLine(r.command, 70)}`,
        subtitle: r.description || undefined,
        facts: [`\`${r.command}\` succeeded after failing earlier in the same stretch of work`],
        narrative: `\`${r.command}\` failed earlier and succeeds now, so the changes in between fixed it.${r.output ? ` Output: ${r.output}` : ''}`,
        concepts: ['problem-solution', 'what-changed'],
      });
    } else if (!onlyLooks(r.command)) {
      drafts.push({
        type: 'change',
        title: `Ran: ${oneLine(r.command, 70)}`,
        subtitle: r.description || undefined,
        facts: [
          `\`${r.command}\` succeeded${r.exitCode !== null ? ` (exit code ${r.exitCode})` : ''}`,
          ...(r.output ? [`Output: ${r.output}`] : []),
        ],
        narrative: `The agent ran \`${r.command}\` in ${where(event)} and it succeeded.${r.output ? ` Output: ${r.output}` : ''}`,
        concepts: ['what-changed'],
      });
    }
  }
  return drafts;
}

function editDrafts(events: ToolEvent[]): Draft[] {
  // Several edits of one file in a batch are one piece of work: one observation per file.
  const byFile = new Map<string, { shown: string; created: boolean; snippets: string[]; tools: Set<string> }>();
  for (const event of events) {
    const input = asObject(event.toolInput);
    const res = asObject(event.toolResponse);
    for (const file of extractFileEvidence([event]).modified) {
      const entry = byFile.get(file) ?? {
        shown: relativeToRoot(file, event.projectRoot),
        created: false,
        snippets: [],
        tools: new Set<string>(),
      };
      entry.tools.add(event.toolName);
      if (str(res?.type) === 'create') entry.created = true;
      const added = str(input?.new_string) || str(input?.content) || str(input?.new_source);
      if (added.trim()) entry.snippets.push(oneLine(added, 100));
      if (Array.isArray(input?.edits))
        for (const e of input.edits)
          if (e && typeof e === 'object') {
            const s = str((e as Json).new_string);
            if (s.trim()) entry.snippets.push(oneLine(s, 100));
          }
      byFile.set(file, entry);
    }
  }
  return [...byFile.entries()].map(([file, e]) => {
    const name = e.shown.split('/').pop() || e.shown;
    const verb = e.created ? 'Created' : 'Edited';
    return {
      type: 'change',
      title: `${verb} ${name}`,
      subtitle: e.shown,
      facts: [
        `${e.shown} was ${e.created ? 'created' : 'modified'} with ${[...e.tools].join(', ')}`,
        ...e.snippets.slice(0, 2).map((s) => `New text: ${s}`),
      ],
      narrative: `The agent ${e.created ? 'created' : 'changed'} ${e.shown}.${e.snippets[0] ? ` It now contains: ${e.snippets[0]}` : ''}`,
      concepts: ['what-changed'],
      filesModified: [file],
    };
  });
}

function failureDraft(event: ToolEvent): Draft | null {
  const res = asObject(event.toolResponse);
  const errorText =
    str(res?.error) || (res?.is_error === true || res?.isError === true ? oneLine(event.toolResponse, 200) : '');
  if (!errorText) return null;
  return {
    type: 'discovery',
    title: `${event.toolName} failed`,
    facts: [`${event.toolName} returned an error: ${oneLine(errorText, 200)}`],
    narrative: `A call to ${event.toolName} failed: ${oneLine(errorText, 200)}`,
    concepts: ['gotcha'],
  };
}

/** XML for the batch: edits, meaningful commands with their outcome, and failures; reads and listings are skipped. */
export function heuristicObservations(events: ToolEvent[]): string {
  const lower = (e: ToolEvent) => e.toolName.toLowerCase();
  const drafts = [
    ...editDrafts(events.filter((e) => EDIT_TOOLS.has(lower(e)) || /apply_?patch/.test(lower(e)))),
    ...commandDrafts(events.filter((e) => lower(e) === 'bash' || lower(e) === 'exec_command' || lower(e) === 'shell')),
  ];
  for (const e of events) {
    const name = lower(e);
    if (
      EDIT_TOOLS.has(name) ||
      /apply_?patch/.test(name) ||
      name === 'bash' ||
      name === 'exec_command' ||
      name === 'shell'
    )
      continue;
    if (QUIET_TOOLS.has(name)) continue;
    const d = failureDraft(e);
    if (d) drafts.push(d);
  }
  return drafts.map(render).join('\n');
}

function lastUserRequest(request: ObserverRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = /<user_request>([\s\S]*?)<\/user_request>/.exec(request.messages[i]!.content);
    if (m && m[1]!.trim() && m[1]!.trim() !== '(not captured)') return m[1]!.trim();
  }
  return '';
}

/** A minimal summary from the request and the agent's last message; skipped when there is neither. */
export function heuristicSummary(summary: SummaryRequest, userRequest: string): string {
  const last = summary.lastAssistantMessage.trim();
  if (!last && !userRequest) return '<skip_summary reason="no request or final message to summarise"/>';
  return [
    '<summary>',
    userRequest ? `<request>${esc(oneLine(userRequest, 300))}</request>` : '',
    last ? `<completed>${esc(oneLine(last, 500))}</completed>` : '',
    '<notes>Written without an LLM observer (heuristic mode).</notes>',
    '</summary>',
  ].join('');
}

export function createHeuristicProvider(): ObserverProvider {
  return {
    name: 'heuristic',
    model: 'heuristic',
    async complete(request: ObserverRequest): Promise<ObserverReply> {
      const parts = [heuristicObservations(request.events)];
      if (request.summary) parts.push(heuristicSummary(request.summary, lastUserRequest(request)));
      return {
        text: parts.filter((p) => p !== '').join('\n'),
        model: 'heuristic',
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    },
  };
}
