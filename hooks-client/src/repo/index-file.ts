// The blob ids the git index holds for some paths, read from the index file in this process (no `git`, nothing the
// repository configures runs; the file read as a regular file of the real git folder, never through a link): for a
// file an agent changed, the content before the change (its `base`, src/shared/evidence.ts: a record whose file is
// back to it was reverted). Index versions 2, 3 and 4; one pass over the file, stopping after the last path asked
// for (entries are sorted by path, bytewise).
import type { RepoInfo } from './locate';
import { readRegularFile } from './read';
import { objectFormat } from './tracked';

/** Larger index files are not read (a repository of some 500,000 files): no base is sent. */
export const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/** git's varint of index v4 (read-cache.c decode_varint): the bytes to drop from the previous name. */
function varint(buf: Buffer, at: number): { value: number; next: number } | null {
  let i = at;
  let c = buf[i++];
  if (c === undefined) return null;
  let value = c & 127;
  while (c & 128) {
    value += 1;
    c = buf[i++];
    if (c === undefined || value > 2 ** 24) return null;
    value = value * 128 + (c & 127);
  }
  return { value, next: i };
}

/**
 * The blob id each of `paths` has at stage 0 in the index: absent from the map when the index has no entry for
 * it; null when the index cannot be read (none, a link, too large, another format). Root-relative `/` paths.
 */
export function indexBlobs(repo: Pick<RepoInfo, 'real'>, paths: readonly string[]): Map<string, string> | null {
  const buf = readRegularFile(repo.real.gitDir, 'index', MAX_INDEX_BYTES + 1, repo.real.gitDir);
  if (!buf || buf.length > MAX_INDEX_BYTES || buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const hashLen = objectFormat(repo) === 'sha256' ? 32 : 20;
  // Names are compared as bytes (git's order); v2/v3 names are never turned into strings.
  const wanted = paths.map((p) => ({ path: p, bytes: Buffer.from(p, 'utf8') }));
  const last = wanted.reduce<Buffer | null>((m, w) => (m && Buffer.compare(m, w.bytes) >= 0 ? m : w.bytes), null);
  const out = new Map<string, string>();
  let at = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let n = 0; n < count && out.size < wanted.length; n++) {
    const flagsAt = at + 40 + hashLen;
    if (flagsAt + 2 > buf.length) return out;
    const flags = buf.readUInt16BE(flagsAt);
    const nameAt = flagsAt + 2 + (version >= 3 && (flags & 0x4000) !== 0 ? 2 : 0);
    let name: Buffer;
    const entryAt = at;
    if (version === 4) {
      const v = varint(buf, nameAt);
      if (!v) return out;
      const end = buf.indexOf(0, v.next);
      if (end < 0) return out;
      name = Buffer.concat([prev.subarray(0, Math.max(0, prev.length - v.value)), buf.subarray(v.next, end)]);
      prev = name;
      at = end + 1;
    } else {
      const end = buf.indexOf(0, nameAt);
      if (end < 0) return out;
      name = buf.subarray(nameAt, end);
      at = entryAt + ((end - entryAt + 8) & ~7);
    }
    if (((flags >> 12) & 3) === 0)
      for (const w of wanted)
        if (w.bytes.equals(name)) out.set(w.path, buf.toString('hex', flagsAt - hashLen, flagsAt));
    if (last && Buffer.compare(name, last) > 0) break;
  }
  return out;
}
