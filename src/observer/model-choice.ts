// Which model a turn asks: a deployment may name a cheaper model (OBSERVER_READONLY_MODEL) for turns in which
// the agent only looked around. Off unless set; docs/contracts.md says why.
import type { ObserverProvider, ObserverRequest, ToolEvent } from './types';

/**
 * Tools that read and change nothing, under Claude Code's names (Gemini's are mapped to them by the hooks
 * client) and the other agents' own. Bash is never here: a command may do anything.
 */
const READ_ONLY_TOOLS = new Set([
  'read',
  'read_file',
  'notebookread',
  'glob',
  'grep',
  'grep_search',
  'ls',
  'list_files',
  'list_directory',
  'webfetch',
  'web_fetch',
  'websearch',
]);

export const isReadOnlyTool = (name: string): boolean => READ_ONLY_TOOLS.has(name.toLowerCase());

/** A turn of tool calls that all only read, with no session summary asked for (summaries keep the main model). */
export function readOnlyTurn(events: readonly Pick<ToolEvent, 'toolName'>[], summary: unknown): boolean {
  return summary === null && events.length > 0 && events.every((e) => isReadOnlyTool(e.toolName));
}

/**
 * The provider as it is, or one that asks `readOnlyModel` for read-only turns. The reply names the model that
 * answered, so usage is metered under it.
 */
export function withReadOnlyModel(provider: ObserverProvider, readOnlyModel: string | undefined): ObserverProvider {
  if (!readOnlyModel || provider.name === 'heuristic' || readOnlyModel === provider.model) return provider;
  return {
    name: provider.name,
    model: provider.model,
    readOnlyModel,
    complete: (request: ObserverRequest) =>
      provider.complete(readOnlyTurn(request.events, request.summary) ? { ...request, model: readOnlyModel } : request),
  };
}
