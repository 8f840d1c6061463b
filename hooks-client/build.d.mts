// Types for build.mjs, so tests can build the client before running it.
export function buildClient(opts?: { quiet?: boolean }): Promise<{ version: string; sha256: string; code: string }>;
