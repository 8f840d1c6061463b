// One observer turn: prepare the request, call the provider, classify and parse the reply, correct file lists.
import { classifyOutput, isAuthFailureText, isQuotaText, previewOutput } from './classifier';
import { dropPending, prepareTurn, recordReply, type ConversationState, type PrepareInput } from './conversation';
import { correctFileLists } from './evidence';
import { parseCorrections, parsePersonal, parseObserverOutput } from './parser';
import {
  ObserverFailure,
  type ObserverProvider,
  type ObserverUsage,
  type ParsedSummary,
  type ProposedCorrection,
} from './types';
import type { ObservationContent } from '#shared/wire/records';
import { providerWindow } from './window';
import { log, type LogFields } from '../lib/log';

export interface TurnInput extends PrepareInput {
  /** The conversation as stored after the last successful turn; null for a new session. */
  state: ConversationState | null;
  /** Where warnings go (prose replies); console by default. */
  log?: (message: string, data: LogFields) => void;
  /** The deployment's statement of the model's window (OBSERVER_CONTEXT_TOKENS), over the known one (window.ts). */
  contextTokens?: number;
}

/**
 * What the SessionDO does with each outcome: `parsed`/`empty`/`prose` → store what there is, confirm the
 * events and keep `state`; `failure` → keep the events and the old state, back off per `failure.kind`.
 */
export type TurnOutcome =
  | {
      kind: 'parsed';
      observations: ObservationContent[];
      summary: ParsedSummary | null;
      /** Stored records the reply says its observations supersede (only meaningful for records it was shown). */
      corrections: ProposedCorrection[];
      /** Indices of observations the reply marked as the user's own preference or rule (personal memory). */
      personal?: number[];
      usage: ObserverUsage;
      model: string;
      state: ConversationState;
    }
  | { kind: 'empty'; usage: ObserverUsage; model: string; state: ConversationState }
  | { kind: 'prose'; preview: string; usage: ObserverUsage; model: string; state: ConversationState }
  | { kind: 'failure'; failure: ObserverFailure };

const defaultLog = (message: string, data: LogFields) => log('warn', message, data);

function asFailure(err: unknown): ObserverFailure {
  if (err instanceof ObserverFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ObserverFailure('server', `observer provider failed: ${message}`);
}

export async function runTurn(provider: ObserverProvider, input: TurnInput): Promise<TurnOutcome> {
  const log = input.log ?? defaultLog;
  const { request, state } = prepareTurn(input.state, {
    ...input,
    window: input.window ?? providerWindow(provider, input.contextTokens),
  });

  let reply;
  try {
    reply = await provider.complete(request);
  } catch (err) {
    return { kind: 'failure', failure: asFailure(err) };
  }
  const { usage, model } = reply;

  const cls = classifyOutput(reply.text);
  if (cls === 'idle') return { kind: 'empty', usage, model, state: recordReply(state, reply) };

  const parsed =
    cls === 'xml'
      ? parseObserverOutput(reply.text, input.mode, {
          allowBoth: request.events.length > 0 && request.summary !== null,
        })
      : null;
  if (parsed?.valid) {
    return {
      kind: 'parsed',
      observations: correctFileLists(parsed.observations, request.events),
      summary: parsed.summary,
      corrections: input.prior ? parseCorrections(reply.text, input.mode) : [],
      personal: parsePersonal(reply.text, input.mode),
      usage,
      model,
      state: recordReply(state, reply),
    };
  }

  // Prose, or XML we could not use. Words about an exhausted allowance or refused credentials mean the
  // observer could not think: keep the events and back off instead of confirming them.
  if (isQuotaText(reply.text))
    return {
      kind: 'failure',
      failure: new ObserverFailure('spend_cap', `observer reported an exhausted quota: ${previewOutput(reply.text)}`),
    };
  if (isAuthFailureText(reply.text))
    return {
      kind: 'failure',
      failure: new ObserverFailure('auth', `observer reported an authentication failure: ${previewOutput(reply.text)}`),
    };

  const preview = previewOutput(reply.text);
  log('observer reply was not usable XML; events confirmed without observations', {
    provider: provider.name,
    model,
    class: cls,
    events: request.events.length,
    chars: reply.text.length,
  });
  return { kind: 'prose', preview, usage, model, state: dropPending(state) };
}
