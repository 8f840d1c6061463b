// The sender's HTTP hook door as both sides name it: the hook entry that install writes
// (agents/settings-merge.ts) and the listener that checks it (sender/listen.ts). Its port and nonce live in the
// state folder (door/state.ts).
import { ENTRY_ENV_KEYS } from './inbox/entry';

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

/** The headers the HTTP hook sends: `$VAR` is filled in by Claude Code from the allowed variables. */
export function hookHeaders(): Record<string, string> {
  const h: Record<string, string> = { [NONCE_HEADER]: `$${NONCE_ENV}`, 'x-cairn-internal': '$CAIRN_INTERNAL' };
  for (const [k, header] of Object.entries(ENV_HEADERS)) h[header] = `$${k}`;
  return h;
}
