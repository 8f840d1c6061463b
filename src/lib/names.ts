// The name rule for teams, users (handles) and devices: short, URL- and shell-safe. One rule for every path
// that makes or names one: bootstrap, the admin routes, import (src/transfer/records.ts).
import * as z from 'zod';

/** Team, user and device names: letters, digits, `.`, `_`, `-`; no spaces, controls or bidi marks. */
export const Name = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');
export type Name = z.infer<typeof Name>;
