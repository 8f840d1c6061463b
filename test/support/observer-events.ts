// Builders for observer test inputs: tool events the way the SessionDO hands them to a turn.
import type { SummaryRequest, ToolEvent } from '../../src/observer/types';

let counter = 0;
export const T0 = Date.UTC(2026, 10, 30, 9, 0, 0);

export function toolEvent(
  toolName: string,
  input: unknown,
  response: unknown = {},
  over: Partial<ToolEvent> = {},
): ToolEvent {
  counter += 1;
  return {
    eventId: `evt-${counter}`,
    toolName,
    toolInput: typeof input === 'string' ? input : JSON.stringify(input),
    toolResponse: typeof response === 'string' ? response : JSON.stringify(response),
    cwd: '/home/dev/widgets',
    toolUseId: `toolu_${counter}`,
    agentId: null,
    agentType: null,
    occurredAt: T0 + counter * 1000,
    promptNumber: 1,
    ...over,
  };
}

export const summaryRequest = (lastAssistantMessage: string, promptNumber = 1): SummaryRequest => ({
  eventId: `sum-${++counter}`,
  lastAssistantMessage,
  occurredAt: T0 + counter * 1000,
  promptNumber,
});
