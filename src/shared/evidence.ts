// Evidence: whether what a record says about the code still holds in the reader's checkout. Pure, shared by the
// Worker (which judges every record before it is used) and the hooks client (which reports its checkout).
//
// A record keeps, for each file it read or changed, the git blob id of that file's content when it was recorded
// (and, for a file it changed, the id before the change), plus the names its text cites. A reader's checkout is
// reported as a map of entries keyed by `evidenceKey`: no path, branch or name is stored in the clear.
import { isPathName } from './names';

/** What a record's evidence says against a checkout. */
export const EVIDENCE_VALUES = ['current', 'changed', 'gone', 'unknown'] as const;
export type Evidence = (typeof EVIDENCE_VALUES)[number];

/**
 * Why a record is judged as it is. `code_changed`: a cited file's content differs; `files_gone`: a cited file is
 * absent; `names_missing`: names it cites occur in none of its files now; `reverted`: a file it changed is back to
 * its content before the change; `branch_deleted`: recorded on a branch that was deleted without merging;
 * `unmerged`: recorded on a branch whose work never reached the reader's (its files differ for that reason alone:
 * lineage, which the index marks `⎇name`, not code); `no_evidence`: the record has no file ids (older rows, no
 * repository); `no_checkout`: the reader's checkout is not known for its files.
 */
export const EVIDENCE_REASONS = [
  'code_changed',
  'files_gone',
  'names_missing',
  'reverted',
  'branch_deleted',
  'unmerged',
  'no_evidence',
  'no_checkout',
] as const;
export type EvidenceReason = (typeof EVIDENCE_REASONS)[number];

/** One file a record cites, with the ids taken when it was recorded. */
export interface CitedFile {
  /** Relative to the repository's top level, `/` separators. */
  path: string;
  /** The git blob id of its content then; null: the file did not exist (such a file proves nothing). */
  blob: string | null;
  /** Its blob id before the record's change (modified files only; null: new file or unknown). */
  base?: string | null;
  /** `wsIdOf` its content then: equal ids mean the content differs at most in whitespace. */
  ws?: string | null;
}

export interface RecordEvidence {
  files: readonly CitedFile[];
  /** Identifiers the record's text cites (src/shared/names.ts). */
  names: readonly string[];
  /** The branch it was recorded on (null: unknown or detached). */
  branch?: string | null;
}

/**
 * A reader's checkout as the server keeps it: `f<key(path)>` → file entry (see `fileEntry`), `b<key(branch)>` →
 * `1` (the branch exists, locally or remote-tracking), `d` (it existed when this checkout last looked and is gone
 * now) or `0` (this checkout never had it). Keys never hold the text they stand for.
 */
export type CheckoutEntries = Readonly<Record<string, string>>;

export interface Judgement {
  value: Evidence;
  reasons: EvidenceReason[];
  /** Cited names that occur in none of its files now (shown in the index line), in the record's order. */
  missingNames: string[];
}

// --- keys ---------------------------------------------------------------------------------------------------

/**
 * A 53-bit hash as 14 hex digits (cyrb53): the key a path, branch or name is stored and compared under. Not a
 * secret and not collision-proof against someone trying; within one project's few hundred cited paths the odds
 * of an accidental collision are ~1e-11. Linear in the string's length.
 */
export function evidenceKey(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const n = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return n.toString(16).padStart(14, '0');
}

export const fileKey = (path: string) => `f${evidenceKey(path)}`;
export const branchKey = (name: string) => `b${evidenceKey(name)}`;

/** A blob id: SHA-1 (40) or SHA-256 (64) lower-case hex. */
export const isBlobId = (v: string) => /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(v);
/** A whitespace-insensitive content id: 16 lower-case hex. */
export const isWsId = (v: string) => /^[0-9a-f]{16}$/.test(v);

/**
 * A file entry's value: `<blob>:<ws>:<missing name keys, comma-separated>`, or `-` when the file is absent. `?`
 * in the last part means its names were not checked (known from a tool event, not from a report).
 */
export function fileEntry(f: { blob: string | null; ws?: string | null; missing?: readonly string[] | null }): string {
  if (!f.blob) return '-';
  const missing = f.missing === null || f.missing === undefined ? '?' : f.missing.join(',');
  return `${f.blob}:${f.ws ?? ''}:${missing}`;
}

interface FileState {
  blob: string | null;
  ws: string | null;
  /** Name keys it does not contain; null when not checked. */
  missing: Set<string> | null;
}

function parseFileEntry(v: string | undefined): FileState | undefined {
  if (v === undefined) return undefined;
  if (v === '-') return { blob: null, ws: null, missing: null };
  const [blob = '', ws = '', missing = '?'] = v.split(':', 3);
  if (!isBlobId(blob)) return undefined;
  return {
    blob,
    ws: ws || null,
    missing: missing === '?' ? null : new Set(missing ? missing.split(',') : []),
  };
}

/** Lines a digest is taken over: `key=value`, sorted. Both sides compute it the same way. */
export function canonicalEntries(entries: CheckoutEntries): string {
  return Object.keys(entries)
    .sort()
    .map((k) => `${k}=${entries[k]}`)
    .join('\n');
}

// --- judgement ----------------------------------------------------------------------------------------------

export interface JudgeContext {
  /** The record's lineage against the reader's history (src/evidence/branches.ts): `unmerged` enables `branch_deleted`. */
  unmerged?: boolean;
  /** The record was made on the reader's own device: a branch it never reports having was deleted there. */
  recordedHere?: boolean;
}

const UNKNOWN_NO_EVIDENCE: Judgement = { value: 'unknown', reasons: ['no_evidence'], missingNames: [] };
const UNKNOWN_NO_CHECKOUT: Judgement = { value: 'unknown', reasons: ['no_checkout'], missingNames: [] };
const UNKNOWN_UNMERGED: Judgement = { value: 'unknown', reasons: ['unmerged'], missingNames: [] };

/**
 * Judges one record against a checkout (null: none known). Every cited file unchanged → `current` (content equal up
 * to whitespace counts as unchanged: a formatter run does not make a note wrong); a cited file changed or absent →
 * `changed` (every cited file absent → `gone`); files the checkout says nothing about are left out; nothing known →
 * `unknown`. A changed record also says which of its names occur in none of its existing files. A record from a
 * branch deleted without merging is `changed` (`branch_deleted`); one from a branch that never merged but still
 * exists is `unknown` (`unmerged`): its ⎇ mark says it. Linear in the record's files and names.
 */
export function judgeEvidence(
  rec: RecordEvidence,
  checkout: CheckoutEntries | null,
  ctx: JudgeContext = {},
): Judgement {
  if (branchDeleted(rec, checkout, ctx)) return changedBy(['branch_deleted']);
  // Work of a branch that never merged here differs from this checkout by lineage, not because its code changed.
  if (ctx.unmerged) return UNKNOWN_UNMERGED;
  const cited = uniqueCited(rec.files);
  if (!cited.length) return UNKNOWN_NO_EVIDENCE;
  if (!checkout) return UNKNOWN_NO_CHECKOUT;
  let same = 0;
  let changed = 0;
  let reverted = 0;
  let gone = 0;
  const present: FileState[] = [];
  for (const f of cited) {
    const now = parseFileEntry(checkout[fileKey(f.path)]);
    if (!now) continue;
    if (now.blob === null) {
      gone++;
      continue;
    }
    present.push(now);
    if (now.blob === f.blob || (f.ws && now.ws === f.ws)) same++;
    else if (f.base && now.blob === f.base) reverted++;
    else changed++;
  }
  if (same + changed + reverted + gone === 0) return UNKNOWN_NO_CHECKOUT;
  if (gone === cited.length) return { value: 'gone', reasons: ['files_gone'], missingNames: [] };
  if (changed + reverted + gone === 0) return current();
  const reasons: EvidenceReason[] = [];
  if (changed) reasons.push('code_changed');
  if (gone) reasons.push('files_gone');
  if (reverted) reasons.push('reverted');
  const missingNames = namesMissing(rec, present, checkout);
  if (missingNames.length) reasons.push('names_missing');
  return { value: 'changed', reasons, missingNames };
}

const current = (): Judgement => ({ value: 'current', reasons: [], missingNames: [] });
const changedBy = (reasons: EvidenceReason[]): Judgement => ({ value: 'changed', reasons, missingNames: [] });

/** One entry per path (a file read and then changed in one record): the one with a base, else the last. */
function uniqueCited(files: readonly CitedFile[]): CitedFile[] {
  const byPath = new Map<string, CitedFile>();
  for (const f of files) {
    if (!f.blob) continue;
    const seen = byPath.get(f.path);
    if (!seen || !seen.base) byPath.set(f.path, f);
  }
  return [...byPath.values()];
}

/**
 * Names the checkout no longer has: a path name whose file is reported absent; an identifier that no present cited
 * file contains (said only when every present cited file had its names checked: otherwise nothing is known).
 */
function namesMissing(rec: RecordEvidence, present: readonly FileState[], checkout: CheckoutEntries): string[] {
  const checked = present.length > 0 && present.every((p) => p.missing !== null);
  return rec.names.filter((n) => {
    if (isPathName(n)) return !namesCitedFile(n, rec.files) && checkout[fileKey(n)] === '-';
    if (!checked) return false;
    const k = evidenceKey(n);
    return present.every((p) => p.missing!.has(k));
  });
}

/**
 * The record's branch is gone without its work having reached HEAD or the trunk: the checkout saw the branch and
 * no longer has it, or never has it although the record was made on this very device (a teammate's branch that
 * was never pushed is not called deleted: only its ⎇ mark says it never merged).
 */
/**
 * Whether a path the text names is one of the record's own files: the same path, or its tail (`src/generated.ts` for
 * `packages/ua-blocker/src/generated.ts`: a path written relative to a package folder).
 */
export function namesCitedFile(name: string, files: readonly { path: string }[]): boolean {
  return files.some((f) => f.path === name || f.path.endsWith(`/${name}`));
}

function branchDeleted(rec: RecordEvidence, checkout: CheckoutEntries | null, ctx: JudgeContext): boolean {
  if (!ctx.unmerged || !rec.branch || !checkout) return false;
  const v = checkout[branchKey(rec.branch)];
  return v === 'd' || (v === '0' && !!ctx.recordedHere);
}

/** The words an index line or a search line carries for a judgement; '' for current and unknown. */
export function evidenceNote(j: Judgement, maxNames = 3): string {
  if (j.value === 'gone') return 'files gone';
  if (j.value !== 'changed') return '';
  const parts: string[] = [];
  if (j.reasons.includes('reverted')) parts.push('its change was reverted');
  if (j.reasons.includes('files_gone')) parts.push('some files gone');
  if (j.reasons.includes('branch_deleted')) parts.push('branch deleted unmerged');
  if (j.missingNames.length) {
    const shown = j.missingNames.slice(0, maxNames).join(', ');
    const more = j.missingNames.length > maxNames ? ` +${j.missingNames.length - maxNames}` : '';
    parts.push(`${shown}${more} no longer in the code`);
  }
  return parts.length ? `code changed: ${parts.join('; ')}` : 'code changed';
}

/** `evidence: changed (code changed: …)` as search and MCP lines carry it; `evidence: unknown` when not judged. */
export function evidenceLabel(j: Judgement | null | undefined): string {
  const note = j ? evidenceNote(j) : '';
  return `evidence: ${j?.value ?? 'unknown'}${note && j?.value === 'changed' ? ` (${note})` : ''}`;
}
