// The repository's own instruction file (AGENTS.md, CLAUDE.md at the checkout's top), read for `cairn promote` the
// way the client reads any file of a checkout (read.ts): a regular file, never through a link. A committed
// `AGENTS.md -> ~/.ssh/config` would otherwise put the user's private file into a patch, and a patch against a
// link would have `git apply` write through it; so a link, a folder or a FIFO there is refused, not followed.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFile, regularFileUnder } from './read';
import type { RepoInfo } from './locate';

/** An instruction file larger than this is not one cairn edits (the biggest real ones are tens of KB). */
export const INSTRUCTION_MAX = 1024 * 1024;

export type InstructionFile = { text: string | null } | { refused: string };

/** `name`'s text at the checkout's top (null: absent, a patch creates it), or why it is not read. */
export function readInstructionFile(repo: RepoInfo, name: 'AGENTS.md' | 'CLAUDE.md'): InstructionFile {
  const path = join(repo.root, name);
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { text: null };
    return { refused: `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (st.isSymbolicLink())
    return { refused: `${path} is a symbolic link; cairn does not follow links in a repository` };
  const found = regularFileUnder(repo.root, name);
  if (!found) return { refused: `${path} is not a regular file` };
  if (found.stat.size > INSTRUCTION_MAX) return { refused: `${path} is larger than ${INSTRUCTION_MAX} bytes` };
  const buf = readRegularFile(repo.root, name, INSTRUCTION_MAX);
  if (buf === null) return { refused: `${path} changed while it was read; run the command again` };
  const text = buf.toString('utf8');
  if (text.includes('\0')) return { refused: `${path} is not text` };
  return { text };
}
