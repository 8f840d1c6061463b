// Rows a live session gets without the observer (issue 36, continue anywhere): its open todos, sent with each Stop,
// and handoff notes written on purpose (`/cairn:handoff`, `cairn handoff`). Each is an observation of the session
// through the one insert (redaction, hold-back), marked by its source, so forget, retention, export, the move and
// search treat it like every record; saving the same text twice in a session stores it once (content hash).
import { redactionAudit, writeAudit } from '../db/audit';
import { db, type Db } from '../db/client';
import { HANDOFF_SOURCE, insertObservation, observationIdByHash, TODOS_SOURCE } from '../db/observations';
import type { ObservationContent } from '#shared/wire/records';
import { tallied, type RedactionTally } from '#shared/redact';
import { observationHash } from './hash';

export { HANDOFF_SOURCE, TODOS_SOURCE } from '../db/observations';

/** A todo as the client sends it (from the agent's todo list in its transcript). */
export interface OpenTodo {
  text: string;
  status: 'pending' | 'in_progress';
}

export const MAX_TODOS = 30;
/** Every mode derives from `code`, which has it: what these rows are filed as. */
const NOTE_TYPE = 'discovery';

export interface SessionNotePlace {
  teamId: number;
  projectId: number;
  sessionDbId: number;
  authorUserId: number;
  deviceId: number | null;
  promptNumber: number;
  promptId: string | null;
  createdAt: number;
  gitBranch: string | null;
  gitCommit: string | null;
}

/** The open todos as one observation: a title that counts them, one fact each (`[in progress] …` first). Pure. */
export function todosContent(todos: readonly OpenTodo[]): ObservationContent {
  const open = [...todos.filter((t) => t.status === 'in_progress'), ...todos.filter((t) => t.status === 'pending')];
  const facts = open.slice(0, MAX_TODOS).map((t) => `${t.status === 'in_progress' ? '[in progress] ' : ''}${t.text}`);
  return {
    type: NOTE_TYPE,
    title: facts.length ? `Open todos (${facts.length})` : 'No open todos',
    subtitle: null,
    facts,
    narrative: facts.length ? facts.map((f) => `- ${f}`).join('\n') : 'Every todo of the session is done.',
    concepts: [],
    filesRead: [],
    filesModified: [],
  };
}

/** A handoff note as one observation: `Handoff: <first words>` and the note in full. Pure. */
export function handoffContent(text: string): ObservationContent {
  const first = text.replace(/\s+/g, ' ').trim();
  return {
    type: NOTE_TYPE,
    title: `Handoff: ${first.length > 70 ? `${first.slice(0, 69)}…` : first}`,
    subtitle: null,
    facts: [],
    narrative: text,
    concepts: [],
    filesRead: [],
    filesModified: [],
  };
}

/** Stores one such row (or finds it stored); answers its id. Redactions are counted in the audit log. */
export async function storeSessionNote(
  d1: D1Database | Db,
  place: SessionNotePlace,
  source: typeof TODOS_SOURCE | typeof HANDOFF_SOURCE,
  content: ObservationContent,
  route: 'ingest' | 'remember',
  now: number,
): Promise<{ id: number; duplicate: boolean }> {
  const d = db(d1);
  const contentHash = await observationHash(place.sessionDbId, content);
  const tally: RedactionTally = {};
  const [inserted] = await insertObservation(
    d,
    {
      teamId: place.teamId,
      projectId: place.projectId,
      sessionId: place.sessionDbId,
      promptNumber: place.promptNumber,
      promptId: place.promptId,
      authorUserId: place.authorUserId,
      deviceId: place.deviceId,
      source,
      createdAt: place.createdAt,
      storedAt: now,
      discoveryTokens: 0,
      contentHash,
      gitBranch: place.gitBranch,
      gitCommit: place.gitCommit,
    },
    content,
    tally,
  );
  if (tallied(tally)) await writeAudit(d, redactionAudit(place.teamId, place.authorUserId, route, tally, now));
  if (inserted) return { id: inserted.id, duplicate: false };
  const id = await observationIdByHash(d, place.sessionDbId, contentHash);
  if (id === undefined) throw new Error('duplicate observation vanished');
  return { id, duplicate: true };
}
