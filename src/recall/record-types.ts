// Record shapes the recall API answers with, shared by the Worker and the browser viewer: types only, no imports.

/** A full observation as the API hands it out (`GET /api/observations`, MCP `get_observations`). */
export interface ObservationRecord {
  id: number;
  project: string;
  session: string;
  promptNumber: number;
  type: string;
  title: string | null;
  subtitle: string | null;
  facts: string[];
  narrative: string | null;
  concepts: string[];
  filesRead: string[];
  filesModified: string[];
  createdAt: string;
  author: string;
  device: string | null;
  source: string;
  agentType: string | null;
  discoveryTokens: number;
  /** Approximate tokens (chars/4) of this record's text. */
  tokens: number;
}

/** One entry of `GET /api/projects`. */
export interface ProjectSummary {
  key: string;
  visibility: 'team' | 'private';
  observations: number;
  last_activity: string | null;
}
