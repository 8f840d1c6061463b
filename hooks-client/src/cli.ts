// The bundled executable: hooks-client/dist/cairn.mjs runs this.
import { processIo } from './io';
import { run } from './run';

const startedAt = Date.now() - Math.round(performance.now());
run(process.argv.slice(2), processIo(), startedAt).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = process.argv[2] === 'hook' ? 0 : 1;
  },
);
