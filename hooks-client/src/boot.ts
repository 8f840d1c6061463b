// The file Node runs: compiles the client (embedded as text) with V8's code cache from an earlier hook run.
// The Node version guard comes first: every builtin import below needs process.getBuiltinModule.
import './node-guard';
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { pathsFor } from './config';
import { quickHook } from './inbox/quick';

// Stamped in by hooks-client/build.mjs: the client bundle (cli.ts) and a hash of its exact text.
declare const __CAIRN_BODY__: string;
declare const __CAIRN_BODY_HASH__: string;

// Why: a hook process is mostly start-up. Parsing the ~110 KB client and compiling the functions a hook runs
// costs ~5 ms of a ~35 ms process; V8's code cache (bytecode of everything the last run compiled) skips that.
// The client is a string literal here because a string is scanned far faster than code is pre-parsed.
// V8 checks the cache's V8 version and flags but, of the source, only its length: the file name carries a
// hash of the text, so a cache is never used with a client it was not made from.
const stateDir = pathsFor(process.env).stateDir;
// Async hooks (post-tool-use, once per tool call) end here: stdin into the inbox, a sender made sure of, exit.
// The client below is never compiled for them.
if (quickHook(process.argv.slice(2), process.env, stateDir, process.argv[1])) process.exit(0);

const PREFIX = 'client-';
const SUFFIX = '.v8cache';
const key = `${__CAIRN_BODY_HASH__}-${process.version}-${process.arch}`;
const file = join(stateDir, `${PREFIX}${key}${SUFFIX}`);

let cached: Buffer | undefined;
try {
  cached = readFileSync(file);
} catch {
  // none yet: this run compiles from source
}
const script = new Script(__CAIRN_BODY__, { filename: process.argv[1] ?? 'cairn.cjs', cachedData: cached });
// Written at exit, so the cache holds the functions the run compiled, and only by a hook or the sender: the
// runs whose functions (redaction, delivery) are worth having precompiled.
if ((!cached || script.cachedDataRejected) && (process.argv[2] === 'hook' || process.argv[2] === 'sender')) {
  process.once('exit', () => saveCache(script, file));
}
script.runInThisContext();

function saveCache(s: Script, path: string): void {
  try {
    const dir = dirname(path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, s.createCachedData(), { mode: 0o600 });
    renameSync(tmp, path);
    // Caches of earlier client builds are dead weight; other Node versions' caches of this build are kept.
    const mine = `${PREFIX}${__CAIRN_BODY_HASH__}-`;
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(PREFIX) || !name.endsWith(SUFFIX) || name.startsWith(mine)) continue;
      try {
        unlinkSync(join(dir, name));
      } catch {
        // another process removed it, or (Windows) still has it open: the next write tries again
      }
    }
  } catch {
    // the cache only saves time; without it the next run compiles from source
  }
}
