// Types for sentence-embedder.mjs (imported by vitest.config.ts and the Node tests).
import type { IncomingMessage, ServerResponse } from 'node:http';

export const MODEL_NAME: string;
export const DIMENSIONS: number;
export const MAX_TEXTS: number;
export const MAX_CHARS: number;
export const MAX_BODY_BYTES: number;
/** Stored rows per model call: the longest a query waits behind a backfill. */
export const BATCH: number;
export function loadSentenceModel(): Promise<unknown>;
export function embedTexts(texts: string[], opts?: { query?: boolean }): Promise<number[][]>;
export function embedderHandler(req: IncomingMessage, res: ServerResponse): void;
export function startEmbedderServer(opts?: { port?: number; warm?: boolean }): Promise<{ url: string; stop(): Promise<void> }>;
