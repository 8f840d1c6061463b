// The process boundary (argv aside): environment, cwd, stdin/stdout/stderr and the clock, injectable for tests.
import { homedir } from 'node:os';

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

export function processIo(): Io {
  return {
    env: process.env,
    cwd: process.cwd(),
    readStdin: () => readAll(process.stdin),
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    now: () => Date.now(),
    isTty: Boolean(process.stderr.isTTY),
  };
}

function readAll(stream: NodeJS.ReadStream): Promise<string> {
  if (stream.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

export const homeOf = (env: Io['env']): string => env.HOME || env.USERPROFILE || homedir();
