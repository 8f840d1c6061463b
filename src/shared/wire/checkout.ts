// The exchange by which the server learns a reader's checkout (docs/architecture.md, "Evidence"): the server names
// the files and branches its candidate records cite (the watch), the client answers their ids as entries keyed by
// src/shared/evidence.ts `fileKey`/`branchKey`, and afterwards only a digest while nothing changed. Types and
// bounds only: src/recall/params.ts validates the same shapes at the edge.
import type { GitView } from '../git';

/** Files the server asks about at most (the cited files of the index's candidates, newest first). */
export const MAX_WATCH_FILES = 400;
/** Identifiers checked per watched file at most. */
export const MAX_WATCH_NAMES = 16;
/** Branches the server asks about at most (those of candidates from branches that never merged here). */
export const MAX_WATCH_BRANCHES = 50;
/** Entries a report may hold (files and branches; a report is the state of the watch, nothing else). */
export const MAX_CHECKOUT_ENTRIES = MAX_WATCH_FILES * 2 + MAX_WATCH_BRANCHES;

/** What the server wants reported next time. */
export interface WireWatch {
  files: { path: string; names: string[] }[];
  branches: string[];
}

/**
 * The client's report. `digest`: SHA-256 hex of `canonicalEntries` of the whole state. With `base` (the digest the
 * server last acknowledged), `set`/`drop` are the changes since it; without, `set` is the whole state; with
 * neither, the state is the one `digest` names, already known to the server.
 */
export interface WireCheckoutReport {
  digest: string;
  /** The digest of the watch the client holds (`watch_digest` of an earlier answer): an unchanged watch is not sent. */
  watch?: string;
  base?: string;
  set?: Record<string, string>;
  drop?: string[];
}

/** POST /api/context: what GET /api/context takes, as JSON, and the report. */
export interface WireContextRequest {
  project: string | string[];
  observations?: number;
  sessions?: number;
  full?: number;
  tz?: string;
  git?: Partial<GitView> | null;
  checkout?: WireCheckoutReport;
  /** The agent's session id: the index's receipts are filed under it (src/shared/wire/receipts.ts). */
  session?: string;
}

export interface WireContextAnswer {
  /** The context index, as GET /api/context answers it. */
  text: string;
  checkout: {
    /** The state the server now holds for this device and project (null: none). */
    digest: string | null;
    /** The report could not be applied (unknown base or digest, or a digest that does not match): send it whole. */
    need: boolean;
    /** Cited files of the candidates the held state says nothing about: reporting them again judges more records. */
    unreported: number;
  };
  /** What to report next time; null when it is the watch the request named (`checkout.watch`). */
  watch: WireWatch | null;
  /** SHA-256 hex of the watch's JSON: the client sends it back as `checkout.watch`. */
  watch_digest: string;
}
