// One observer turn: prepare the request, call the provider, classify and parse the reply, correct file lists.
import type { ConversationState, PrepareInput } from './conversation';
import type { ObserverFailure, ObserverProvider, ObserverUsage, ParsedObservation, ParsedSummary } from './types';

export interface TurnInput extends PrepareInput {
  state: ConversationState | null;
}

export type TurnOutcome =
  | { kind: 'parsed'; observations: ParsedObservation[]; summary: ParsedSummary | null; usage: ObserverUsage; model: string; state: ConversationState }
  | { kind: 'empty'; state: ConversationState }
  | { kind: 'prose'; preview: string; state: ConversationState }
  | { kind: 'failure'; failure: ObserverFailure };

export async function runTurn(_provider: ObserverProvider, _input: TurnInput): Promise<TurnOutcome> {
  throw new Error('not implemented yet');
}
