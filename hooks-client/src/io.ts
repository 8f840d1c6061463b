// The process boundary (argv aside): environment, cwd, stdin/stdout/stderr and the clock, injectable for tests.
import { fstatSync, readSync } from 'node:fs';

export interface Io {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Whole stdin as text; '' when there is none. */
  readStdin(): Promise<string>;
  out(text: string): void;
  err(text: string): void;
  now(): number;
  /** True when stderr is a terminal (progress bars, colours). */
  isTty: boolean;
}

/** The real process; `wrote()` tells whether anything went to stdout or stderr (which must drain before exit). */
export function processIo(): Io & { wrote(): boolean } {
  let wrote = false;
  return {
    env: process.env,
    cwd: process.cwd(),
    readStdin: readStdinFd,
    out: (t) => {
      wrote = true;
      process.stdout.write(t);
    },
    err: (t) => {
      wrote = true;
      process.stderr.write(t);
    },
    wrote: () => wrote,
    now: () => Date.now(),
    // A getter: touching process.stderr builds a stream, which a hook never needs.
    get isTty() {
      return Boolean(process.stderr.isTTY);
    },
  };
}

/**
 * Reads fd 0 with plain read(2) calls: touching process.stdin builds a stream (and loads its modules) just to
 * read a few kilobytes. A terminal gives ''; a non-blocking pipe (EAGAIN) falls back to the stream, keeping
 * what was already read.
 */
function readStdinFd(): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    if (fstatSync(0).isCharacterDevice()) return Promise.resolve('');
    const buf = Buffer.allocUnsafe(65_536);
    for (;;) {
      const n = readSync(0, buf, 0, buf.length, null);
      if (n === 0) return Promise.resolve(Buffer.concat(chunks).toString('utf8'));
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EOF') return Promise.resolve(Buffer.concat(chunks).toString('utf8'));
    if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') return Promise.resolve(Buffer.concat(chunks).toString('utf8'));
    return readAll(process.stdin, chunks);
  }
}

function readAll(stream: NodeJS.ReadStream, chunks: Buffer[] = []): Promise<string> {
  if (stream.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

// node:os only when HOME is unset (rare): the hook path does not load it.
export const homeOf = (env: Io['env']): string =>
  env.HOME || env.USERPROFILE || process.getBuiltinModule('node:os').homedir();
