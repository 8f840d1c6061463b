// Where the browser tests find Chromium, and what they do without it: skip with one loud line on a
// developer's machine, fail in CI (CI=true), where .ci/run installs it and a skip would hide a broken viewer.
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const INSTALL_HINT = 'bash scripts/install-chromium.sh';

/** True when the browser tests can run; otherwise prints why not (or throws in CI). */
export function chromiumAvailable(
  env: Record<string, string | undefined> = process.env,
  exists: (p: string) => boolean = existsSync,
): boolean {
  const path = env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (exists(path)) return true;
  const why = `no Chromium at ${path}`;
  if (env.CI && env.CI !== 'false' && env.CI !== '0')
    throw new Error(`browser tests cannot run in CI: ${why} (install it with ${INSTALL_HINT})`);
  console.warn(
    `\n!!! BROWSER TESTS SKIPPED: ${why}. Install Debian's Chromium with \`${INSTALL_HINT}\` (or set CHROMIUM_PATH), then run npm test again. !!!\n`,
  );
  return false;
}
