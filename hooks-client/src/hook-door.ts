// The address of the sender's HTTP hook door, as both sides name it: the hook entry that install and the
// plugin write (agents/settings-merge.ts) and the listener that checks it (sender/listen.ts).
import { ENTRY_ENV_KEYS } from './inbox/entry';
import type { Io } from './io';

/** The environment variable Claude Code reads the secret from (listed in the hook's allowedEnvVars). */
export const NONCE_ENV = 'CAIRN_SENDER_NONCE';
export const NONCE_HEADER = 'x-cairn-nonce';
/** Path prefix of the hook URL: `/cairn/hook/<event>`; also how install and uninstall recognise the handler. */
export const HOOK_PATH = '/cairn/hook/';
/** Headers carrying the hook's own environment, as the quick hook records it (see ENTRY_ENV_KEYS). */
export const ENV_HEADERS: Record<(typeof ENTRY_ENV_KEYS)[number], string> = {
  CAIRN_EXCLUDE_PROJECTS: 'x-cairn-exclude-projects',
  CAIRN_SKIP_TOOLS: 'x-cairn-skip-tools',
};
/** What Claude Code interpolates into the headers: only these variables, never others. */
export const HOOK_ENV_VARS = [NONCE_ENV, 'CAIRN_INTERNAL', ...ENTRY_ENV_KEYS] as const;

/**
 * The loopback port: CAIRN_SENDER_PORT, else one derived from the user id, so two people on one machine get two
 * ports (the plugin and `cairn install` both name it in the hook URL).
 */
export function senderPort(env: Io['env']): number {
  const n = Number(env.CAIRN_SENDER_PORT);
  if (Number.isInteger(n) && n > 0 && n < 65_536) return n;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return 41_000 + (uid % 8_000);
}

/** The headers the HTTP hook sends: `$VAR` is filled in by Claude Code from the allowed variables. */
export function hookHeaders(): Record<string, string> {
  const h: Record<string, string> = { [NONCE_HEADER]: `$${NONCE_ENV}`, 'x-cairn-internal': '$CAIRN_INTERNAL' };
  for (const [k, header] of Object.entries(ENV_HEADERS)) h[header] = `$${k}`;
  return h;
}
