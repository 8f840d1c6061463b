// The bundled executable: hooks-client/dist/cairn.cjs runs this (through boot.ts, which adds V8's code cache).
import { processIo } from './io';
import { run } from './run';

// process.uptime() is a plain binding call; the `performance` global loads the perf_hooks modules (~1 ms).
const startedAt = Date.now() - Math.round(process.uptime() * 1000);
const io = processIo();
const hook = process.argv[2] === 'hook';
// The sender leaves the same way: its kept-alive connection would otherwise hold the process open.
const exitNow = hook || process.argv[2] === 'sender';
const done = (code: number) => {
  // A hook that printed nothing has nothing left to flush: exit now instead of letting Node close the
  // socket and walk its handles first. Anything printed keeps the normal exit, so stdout drains fully.
  if (exitNow && !io.wrote()) process.exit(code);
  process.exitCode = code;
};
run(process.argv.slice(2), io, startedAt).then(done, () => done(hook ? 0 : 1));
