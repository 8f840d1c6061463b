// What a memory record says and the record shapes the API answers with, declared once: the observer's parser,
// the store, import and export, recall, search, MCP and the browser viewer all use these. Zod only (the browser
// viewer imports types from here, never a runtime value).
import * as z from 'zod';

/**
 * The observation types, a closed set: the bundled modes' types (src/observer/modes/code.json; a test keeps the two
 * equal). A type from anywhere else (a model's reply, an import file) is stored as FALLBACK_OBSERVATION_TYPE.
 */
export const OBSERVATION_TYPES = [
  'bugfix',
  'feature',
  'refactor',
  'change',
  'discovery',
  'decision',
  'security_alert',
  'security_note',
  'sensitive',
] as const;
export type ObservationType = (typeof OBSERVATION_TYPES)[number];
export const FALLBACK_OBSERVATION_TYPE: ObservationType = 'discovery';

/** `raw` as one of OBSERVATION_TYPES (case and surrounding space ignored), else the fallback type. */
export function observationType(raw: string): ObservationType {
  const t = raw.trim().toLowerCase();
  return (OBSERVATION_TYPES as readonly string[]).includes(t) ? (t as ObservationType) : FALLBACK_OBSERVATION_TYPE;
}

/** What an observation says: the observer's parser produces it, the one insert writes it (db/observations.ts). */
export const ObservationContent = z.object({
  type: z.string(),
  title: z.string().nullable(),
  subtitle: z.string().nullable(),
  facts: z.array(z.string()),
  narrative: z.string().nullable(),
  concepts: z.array(z.string()),
  /** Paths as the agent gave them; relative to the project root once stored. */
  filesRead: z.array(z.string()),
  filesModified: z.array(z.string()),
});
export type ObservationContent = z.infer<typeof ObservationContent>;

/** What a session summary says: the observer writes it, the one insert stores it (db/summaries.ts). */
export interface SummaryContent {
  request: string;
  investigated: string;
  learned: string;
  completed: string;
  nextSteps: string;
  notes: string | null;
}

/**
 * A record's evidence against the caller's checkout (src/shared/evidence.ts judgeEvidence), as every read of a
 * record hands it out: `current`, `changed` (with why, and the names it cites that no longer occur), `gone`,
 * `unknown`.
 */
export interface WireEvidence {
  value: 'current' | 'changed' | 'gone' | 'unknown';
  reasons: string[];
  missing_names: string[];
}

/** A full observation as the API hands it out (`GET /api/observations`, MCP `get_observations`). */
export interface ObservationRecord extends ObservationContent {
  id: number;
  project: string;
  session: string;
  promptNumber: number;
  createdAt: string;
  author: string;
  device: string | null;
  source: string;
  agentType: string | null;
  discoveryTokens: number;
  /** Approximate tokens (chars/4) of this record's text. */
  tokens: number;
  /** The record that replaces it; its own id when it was marked outdated with nothing in its place; null when current. */
  supersededBy: number | null;
  /** Its evidence against the caller's last reported checkout of its project (absent where not judged). */
  evidence?: WireEvidence;
}

/** A session summary as search and MCP hand it out (`S12`). */
export interface SummaryRecord extends SummaryContent {
  id: number;
  createdAt: number;
  project: string;
  author: string;
}

/** A user prompt as search and MCP hand it out (`P7`). */
export interface PromptRecord {
  id: number;
  createdAt: number;
  project: string;
  author: string;
  promptNumber: number;
  text: string;
}

/** One entry of `GET /api/projects`. */
export interface ProjectSummary {
  key: string;
  visibility: 'team' | 'private';
  observations: number;
  last_activity: string | null;
}
