// Record shapes the recall API answers with, shared by the Worker and the browser viewer: types only, and type
// imports only from modules that import nothing the browser lacks.
import type { ObservationContent } from '../db/observation-content';

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
}

/** One entry of `GET /api/projects`. */
export interface ProjectSummary {
  key: string;
  visibility: 'team' | 'private';
  observations: number;
  last_activity: string | null;
}
