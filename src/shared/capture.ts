// Capture policy (issue 38): whether a checkout's sessions are recorded at all. Admins set it for the team and per
// project (team settings `capture`, `capture_projects`); the server sends the effective mode with the SessionStart
// context (header below) and skips ingest of an `off` project; the hooks client keeps it per checkout and combines it
// with the person's own answer, pause and excluded projects. Shared by the Worker and the hooks client. Pure.

export const CAPTURE_MODES = ['on', 'ask', 'off'] as const;
export type CaptureMode = (typeof CAPTURE_MODES)[number];

/** The response header of `GET /api/context` that carries the effective mode for the checkout's project. */
export const CAPTURE_HEADER = 'x-cairn-capture';

const RANK: Record<CaptureMode, number> = { on: 0, ask: 1, off: 2 };

/** The more restrictive of two modes (off > ask > on). */
export const stricterCapture = (a: CaptureMode, b: CaptureMode): CaptureMode => (RANK[a] >= RANK[b] ? a : b);

/** A mode from untrusted text (a header, a state file), or null. */
export function parseCaptureMode(v: unknown): CaptureMode | null {
  const s = typeof v === 'string' ? v.trim().toLowerCase() : '';
  return (CAPTURE_MODES as readonly string[]).includes(s) ? (s as CaptureMode) : null;
}

/**
 * The admins' mode for a project: the most restrictive of the team's `capture` and the project's own entries in
 * `capture_projects` (under any key it goes by); absent = `on`. A project's entry can ask or stop recording inside a
 * team that records, never record inside a team that is off (issue 38: the most restrictive wins), so turning the
 * team off is one switch that holds everywhere.
 */
export function capturePolicy(
  settings: { capture?: CaptureMode; capture_projects?: Readonly<Record<string, CaptureMode>> },
  keys: readonly string[],
): CaptureMode {
  let project: CaptureMode | null = null;
  for (const key of keys) {
    const own = settings.capture_projects?.[key];
    if (own && Object.hasOwn(settings.capture_projects ?? {}, key))
      project = project ? stricterCapture(project, own) : own;
  }
  return stricterCapture(settings.capture ?? 'on', project ?? 'on');
}
