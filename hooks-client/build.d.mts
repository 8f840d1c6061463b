// Types for build.mjs, so tests can build the client before running it.
export const PLUGIN_COPY: string;
export function writeIfChanged(file: string, text: string, mode?: number): void;
export function buildClient(opts?: { quiet?: boolean; writePlugin?: boolean }): Promise<{ version: string; sha256: string; code: string }>;
