// A test seam for the kill-at-every-step test: with CAIRN_TEST_KILL_AT=<point> (or <point>:<n>, the n-th time
// it is reached), the process SIGKILLs itself there, as Claude Code ending a hook mid-flight would. Never set
// outside that test; costs one env lookup per point.
export type KillPoint =
  | 'lock-created'
  | 'append-meta-written'
  | 'appended'
  | 'replay-locked'
  | 'request-written'
  | 'sent'
  | 'advance-meta-written'
  | 'advanced'
  | 'entry-written'
  | 'entry-renamed'
  | 'drain-spooled';

const reached: Partial<Record<KillPoint, number>> = {};

export function killPoint(point: KillPoint): void {
  const want = process.env.CAIRN_TEST_KILL_AT;
  if (!want || !want.startsWith(point)) return;
  const n = (reached[point] = (reached[point] ?? 0) + 1);
  if (want === point || want === `${point}:${n}`) process.kill(process.pid, 'SIGKILL');
}
