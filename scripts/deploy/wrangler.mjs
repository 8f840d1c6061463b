// Running wrangler for `npm run deploy`: the `wrangler` on PATH (npm run puts this checkout's pinned one first;
// a test puts a fake there), this checkout's as the fallback. Each call is echoed as the command a person
// would type, and what the script reads comes from wrangler's --json output where it has one.
import { spawn } from 'node:child_process';
import path from 'node:path';

export class WranglerError extends Error {
  constructor(args, result) {
    super(
      `wrangler ${args.join(' ')} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim().split('\n').slice(-3).join(' | ')}`,
    );
    this.result = result;
  }
}

export function createWrangler(root, { log = (line) => process.stdout.write(`${line}\n`), env = process.env } = {}) {
  const PATH = [env.PATH ?? '', path.join(root, 'node_modules', '.bin')].filter(Boolean).join(path.delimiter);
  // No telemetry, no Request.cf download; wrangler answers without its update banner when asked for JSON.
  const childEnv = { ...env, PATH, WRANGLER_SEND_METRICS: 'false' };

  /** Runs `wrangler …args`; `tee` shows its output as it comes, `input` is written to its stdin. */
  function run(args, { tee = false, input, quiet = false, extraEnv = {} } = {}) {
    if (!quiet) log(`$ npx wrangler ${args.join(' ')}`);
    return new Promise((resolve, reject) => {
      const child = spawn('wrangler', args, {
        cwd: root,
        env: { ...childEnv, ...extraEnv },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
        if (tee) process.stdout.write(d);
      });
      child.stderr.on('data', (d) => {
        stderr += d;
        if (tee) process.stderr.write(d);
      });
      child.on('error', (err) =>
        reject(
          err.code === 'ENOENT' ? new Error('wrangler was not found: run `npm install` in this checkout first') : err,
        ),
      );
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
  }

  /** Like run, but a non-zero exit throws. */
  async function must(args, opts) {
    const r = await run(args, opts);
    if (r.code !== 0) throw new WranglerError(args, r);
    return r;
  }

  /** JSON wrangler printed (after any banner lines it may print first). */
  function json(r) {
    const text = r.stdout.trim();
    const start = text.search(/^[[{]/m);
    return JSON.parse(start === -1 ? text : text.slice(start));
  }

  /** A refusal that means "no such resource" rather than "could not ask". */
  const notFound = (r) =>
    /not[ _]?found|does not exist|no such|\b404\b|\[code: (?:10006|7404|3000)\]/i.test(`${r.stdout}\n${r.stderr}`);

  return {
    run,
    must,
    async whoami() {
      const r = await run(['whoami', '--json'], { quiet: true });
      try {
        return json(r);
      } catch {
        return { loggedIn: false };
      }
    },
    async d1List() {
      return json(await must(['d1', 'list', '--json']));
    },
    /** The index, or null when it does not exist. */
    async vectorizeGet(name) {
      const r = await run(['vectorize', 'get', name, '--json']);
      if (r.code === 0) return json(r);
      if (notFound(r)) return null;
      throw new WranglerError(['vectorize', 'get', name, '--json'], r);
    },
    async vectorizeInfo(name) {
      return json(await must(['vectorize', 'info', name, '--json']));
    },
    async metadataIndexes(name) {
      return json(await must(['vectorize', 'list-metadata-index', name, '--json']));
    },
    /** Whether the bucket exists. */
    async r2Exists(name) {
      const r = await run(['r2', 'bucket', 'info', name, '--json']);
      if (r.code === 0) return true;
      if (notFound(r)) return false;
      throw new WranglerError(['r2', 'bucket', 'info', name, '--json'], r);
    },
    /** Secret names of the Worker; empty when the Worker does not exist yet. */
    async secretNames() {
      const r = await run(['secret', 'list', '--format', 'json']);
      if (r.code !== 0) {
        if (notFound(r)) return [];
        throw new WranglerError(['secret', 'list', '--format', 'json'], r);
      }
      return json(r).map((s) => s.name);
    },
    /** Rows of one query on a remote database. */
    async query(binding, sql, extra = []) {
      const r = await must(['d1', 'execute', binding, '--remote', '--json', '--command', sql, ...extra]);
      return json(r)[0]?.results ?? [];
    },
  };
}

/** The Worker's URLs from `wrangler deploy` output: the lines under "Deployed <name> triggers". */
export function deployedUrls(output) {
  const lines = output.split('\n');
  const at = lines.findIndex((l) => /^\s*Deployed \S+ triggers/.test(l));
  if (at === -1) return [];
  const urls = [];
  for (const line of lines.slice(at + 1)) {
    const m = /^\s+(https?:\/\/\S+)\s*$/.exec(line);
    if (m) urls.push(m[1]);
    else if (!/^\s+\S/.test(line)) break;
  }
  return urls;
}
