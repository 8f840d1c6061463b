// The reader's checkout and the judgement of records against it (issue 34; docs/architecture.md, "Evidence"). A
// device reports the state of what its candidate records cite (the watch) at SessionStart, then only a digest
// while nothing changed; each reader (index, prompt and file context, search, MCP) judges the records it is about
// to use against the device's stored state with the pure rule of src/shared/evidence.ts.
import {
  branchKey,
  canonicalEntries,
  fileKey,
  judgeEvidence,
  namesCitedFile,
  type CheckoutEntries,
  type Judgement,
} from '#shared/evidence';
import type { GitView } from '#shared/git';
import type { WireEvidence } from '#shared/wire/records';
import { isPathName } from '#shared/names';
import {
  MAX_WATCH_BRANCHES,
  MAX_WATCH_FILES,
  MAX_WATCH_NAMES,
  type WireCheckoutReport,
  type WireWatch,
} from '#shared/wire/checkout';
import type { AuthContext } from '../auth/types';
import {
  checkoutByDigest,
  checkoutsOf,
  evidenceOf,
  saveCheckout,
  type CheckoutOwner,
  type CheckoutRow,
  type StoredEvidence,
} from '../db/evidence';
import { sha256Hex } from '../lib/crypto';
import { judgeRows } from './branches';

export const ownerOf = (auth: Pick<AuthContext, 'teamId' | 'userId' | 'deviceId'>): CheckoutOwner => ({
  teamId: auth.teamId,
  userId: auth.userId,
  deviceId: auth.deviceId ?? 0,
});

const parseEntries = (text: string | null | undefined): Record<string, string> => {
  try {
    const v: unknown = JSON.parse(text ?? '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};
  } catch {
    return {};
  }
};

/**
 * `over` laid on `base`, except where `over` only repeats a file's blob without having checked its names (`…:?`,
 * from a tool event or a Read) and `base` has that same blob with its names checked: that one says more.
 */
export function mergeEntries(base: CheckoutEntries, over: CheckoutEntries): Record<string, string> {
  const out: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const was = base[k];
    const blob = (e: string) => e.slice(0, e.indexOf(':'));
    if (was && v.endsWith(':?') && was.includes(':') && !was.endsWith(':?') && blob(was) === blob(v)) continue;
    out[k] = v;
  }
  return out;
}

/** What a stored row says now: the last report with what tool events changed since laid over it. */
export const stateOf = (row: Pick<CheckoutRow, 'entries' | 'overlay'>): CheckoutEntries =>
  mergeEntries(parseEntries(row.entries), parseEntries(row.overlay));

/** The checkout's git view, for judging lineage (./branches.ts) where the request carries none. */
export const gitViewOf = (row: Pick<CheckoutRow, 'branch' | 'head' | 'trunk' | 'history'>): GitView => ({
  branch: row.branch,
  head: row.head,
  trunk: row.trunk,
  history: row.history ? row.history.split(',') : [],
});

/** A judgement as records carry it on the wire; `unknown` (no checkout known) when not judged. */
export const wireEvidence = (j: Judgement | undefined): WireEvidence =>
  j
    ? { value: j.value, reasons: j.reasons, missing_names: j.missingNames }
    : { value: 'unknown', reasons: ['no_checkout'], missing_names: [] };

export const digestOf = (entries: CheckoutEntries): Promise<string> => sha256Hex(canonicalEntries(entries));

export interface Applied {
  entries: Record<string, string>;
  digest: string;
  /** True when the stored row must be written (a new state, or an overlay to clear). */
  changed: boolean;
}

/**
 * The state a report describes, from what is stored: a bare digest names a state the server holds (this device's,
 * or any device's of the project: a state already seen costs nothing more); `base` + changes apply to this
 * device's stored state; `set` alone is the whole state. Null when it cannot be applied (the client then sends it
 * whole). The digest is always the server's own, taken over the entries it keeps.
 */
export async function applyReport(
  d: D1Database,
  owner: CheckoutOwner,
  projectId: number,
  stored: CheckoutRow | null,
  report: WireCheckoutReport,
): Promise<Applied | null> {
  const overlaid = !!stored && stored.overlay !== '{}';
  if (report.base === undefined && report.set === undefined) {
    if (stored?.digest === report.digest)
      return { entries: parseEntries(stored.entries), digest: stored.digest, changed: overlaid };
    const seen = await checkoutByDigest(d, owner.teamId, projectId, report.digest);
    return seen === null ? null : { entries: parseEntries(seen), digest: report.digest, changed: true };
  }
  let entries: Record<string, string>;
  if (report.base !== undefined) {
    if (!stored || stored.digest !== report.base) return null;
    entries = { ...parseEntries(stored.entries), ...report.set };
    for (const k of report.drop ?? []) delete entries[k];
  } else {
    entries = { ...report.set };
  }
  const digest = await digestOf(entries);
  return { entries, digest, changed: digest !== stored?.digest || overlaid };
}

/** Writes the applied state as the device's checkout of the project, with the request's git view. */
export async function keepCheckout(
  d: D1Database,
  owner: CheckoutOwner,
  projectId: number,
  applied: Applied,
  git: GitView | null,
  now: number,
): Promise<void> {
  await saveCheckout(d, {
    ...owner,
    projectId,
    head: git?.head ?? null,
    branch: git?.branch ?? null,
    trunk: git?.trunk ?? null,
    history: (git?.history ?? []).join(','),
    digest: applied.digest,
    entries: JSON.stringify(applied.entries),
    reportedAt: now,
  });
}

/**
 * What the server asks the device to report next: the files the candidates cite (newest record first; each with the
 * identifiers of the records citing it), the files their text names, and for candidates from branches that never
 * merged here only their branch. Bounded by MAX_WATCH_*.
 */
export function watchOf(
  ordered: readonly number[],
  evidence: ReadonlyMap<number, StoredEvidence>,
  unmerged: ReadonlySet<number> = new Set(),
): WireWatch {
  const files = new Map<string, Set<string>>();
  const add = (path: string, names: readonly string[]) => {
    let set = files.get(path);
    if (!set) {
      if (files.size >= MAX_WATCH_FILES) return;
      set = new Set();
      files.set(path, set);
    }
    for (const n of names) if (set.size < MAX_WATCH_NAMES) set.add(n);
  };
  const branches = new Set<string>();
  for (const id of ordered) {
    const ev = evidence.get(id);
    if (!ev) continue;
    // Unmerged work is judged by its branch (still there, or deleted), not by files it changed elsewhere.
    if (unmerged.has(id)) {
      if (ev.gitBranch && branches.size < MAX_WATCH_BRANCHES) branches.add(ev.gitBranch);
      continue;
    }
    const idents = ev.names.filter((n) => !isPathName(n));
    for (const f of ev.files) add(f.path, idents);
    for (const n of ev.names) if (isPathName(n) && !namesCitedFile(n, ev.files)) add(n, []);
  }
  return { files: [...files].map(([path, names]) => ({ path, names: [...names] })), branches: [...branches] };
}

/** How many watched files and branches the state says nothing about. */
export function unreported(watch: WireWatch, entries: CheckoutEntries): number {
  return (
    watch.files.filter((f) => entries[fileKey(f.path)] === undefined).length +
    watch.branches.filter((b) => entries[branchKey(b)] === undefined).length
  );
}

/** Judges each id for `owner` against the state of its project (null: none known), lineage from `unmerged`. */
export function judgeAll(
  owner: CheckoutOwner,
  ids: readonly number[],
  evidence: ReadonlyMap<number, StoredEvidence>,
  stateFor: (projectId: number) => CheckoutEntries | null,
  unmerged: (id: number) => boolean = () => false,
): Map<number, Judgement> {
  const out = new Map<number, Judgement>();
  for (const id of ids) {
    const ev = evidence.get(id);
    if (!ev) continue;
    const recordedHere = ev.authorUserId === owner.userId && (ev.deviceId ?? 0) === owner.deviceId;
    out.set(
      id,
      judgeEvidence({ files: ev.files, names: ev.names, branch: ev.gitBranch }, stateFor(ev.projectId), {
        unmerged: unmerged(id),
        recordedHere,
      }),
    );
  }
  return out;
}

/**
 * Judges observations (any projects; ids the caller may read) against the caller's stored checkouts: what search,
 * timelines, full records and prompt and file context use. `overlay` adds entries the request itself carries (the
 * file a Read is about to show), the same for every project. Lineage (for `branch_deleted`) is judged against each
 * project's stored git view. Two statements (three in a batch), whatever the number of ids.
 */
export async function judgeStored(
  d: D1Database,
  auth: Pick<AuthContext, 'teamId' | 'userId' | 'deviceId'>,
  ids: readonly number[],
  overlay: (projectId: number) => CheckoutEntries = () => ({}),
): Promise<Map<number, Judgement>> {
  if (!ids.length) return new Map();
  // A caller that never reported a checkout judges nothing (every record unknown): one statement, no evidence read.
  const stored = await checkoutsOf(d, ownerOf(auth));
  const extras = overlay(0);
  if (!stored.length && !Object.keys(extras).length) return new Map();
  const evidence = await evidenceOf(d, auth.teamId, ids);
  const byProject = new Map(stored.map((r) => [r.projectId, r]));
  const unmerged = new Set<number>();
  for (const row of stored) {
    const mine = [...evidence.values()].filter((e) => e.projectId === row.projectId);
    for (const [r, j] of judgeRows(mine, gitViewOf(row))) if (j.lineage === 'unmerged') unmerged.add(r.id);
  }
  return judgeAll(
    ownerOf(auth),
    ids,
    evidence,
    (p) => {
      const row = byProject.get(p);
      const extra = overlay(p);
      if (!row) return Object.keys(extra).length ? extra : null;
      return mergeEntries(stateOf(row), extra);
    },
    (id) => unmerged.has(id),
  );
}

export { checkoutsOf, evidenceOf };
