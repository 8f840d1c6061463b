// `npm run deploy` (scripts/deploy.mjs). The dry run against the real, pinned wrangler with no Cloudflare
// credentials; the real path against a fake `wrangler` on PATH (test/support/fake-wrangler.mjs: an account's
// resources in a JSON file, answers in wrangler 4.86's output formats) and a fake cairn answering the team
// bootstrap route on 127.0.0.1. `--skip-build`: the build is the same `npm run build` every other test runs.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');
const SCRIPT = path.join(ROOT, 'scripts/deploy.mjs');
const FAKE = path.join(ROOT, 'test/support/fake-wrangler.mjs');
let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

interface Call {
  argv: string[];
  ci: string | null;
  secrets?: Record<string, string> | null;
  config?: string | null;
}
interface Account {
  name: string;
  url: string;
  loggedIn: boolean;
  d1: { name: string; uuid: string }[];
  vectorize: Record<
    string,
    { dimensions: number; metric: string; metadata: { propertyName: string; indexType: string }[] }
  >;
  r2: string[];
  worker: { secrets: string[] } | null;
  teams: number;
  schema: string[];
  calls: Call[];
}

/** A checkout-like folder: wrangler.toml (optionally edited) and the migrations it names. */
function workdir(edit: (toml: string) => string = (t) => t): { dir: string; toml: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-deploy-'));
  cpSync(path.join(ROOT, 'migrations'), path.join(dir, 'migrations'), { recursive: true });
  const toml = path.join(dir, 'wrangler.toml');
  writeFileSync(toml, edit(readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')));
  return { dir, toml };
}

function fakeAccount(over: Partial<Account> = {}): { bin: string; stateFile: string; read: () => Account } {
  const bin = mkdtempSync(path.join(tmpdir(), 'fake-wrangler-'));
  copyFileSync(FAKE, path.join(bin, 'wrangler'));
  chmodSync(path.join(bin, 'wrangler'), 0o755);
  const stateFile = path.join(bin, 'account.json');
  const account: Account = {
    name: 'cairn',
    url: 'https://cairn.acme.workers.dev',
    loggedIn: true,
    d1: [],
    vectorize: {},
    r2: [],
    worker: null,
    teams: 0,
    schema: [
      'd1_migrations',
      'teams',
      'observations',
      'observations_fts',
      'observations_fts_ai',
      'summaries_fts',
      'prompts_fts',
    ],
    calls: [],
    ...over,
  };
  writeFileSync(stateFile, JSON.stringify(account));
  return { bin, stateFile, read: () => JSON.parse(readFileSync(stateFile, 'utf8')) as Account };
}

function run(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !/^(CLOUDFLARE_|CAIRN_|ANTHROPIC_|OPENAI_|OBSERVER_|CI$|WORKERS_CI)/.test(k),
      ),
    );
    const home = mkdtempSync(path.join(tmpdir(), 'deploy-home-'));
    const child = spawn(process.execPath, [SCRIPT, ...args], {
      env: { ...clean, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** A cairn that answers the operator's bootstrap (POST /api/admin/teams) the way src/admin/bootstrap.ts does. */
async function fakeCairn(): Promise<{ url: string; seen: { auth: string | undefined; body: unknown }[] }> {
  const seen: { auth: string | undefined; body: unknown }[] = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as { team: string; user: string; device?: string };
      seen.push({ auth: req.headers.authorization, body });
      res.writeHead(req.method === 'POST' && req.url === '/api/admin/teams' ? 201 : 404, {
        'content-type': 'application/json',
      });
      res.end(
        JSON.stringify({
          token: 'cairn_firsttoken0000000000000000000000000000',
          team: body.team,
          user: body.user,
          device: body.device ?? null,
          role: 'owner',
          scopes: ['ingest', 'read', 'admin'],
        }),
      );
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const cmd = (c: Call) => c.argv.filter((a) => !a.startsWith('/')).join(' ');
const NOT_READS = /^(d1 create|d1 delete|d1 migrations|vectorize create|r2 bucket create|deploy|secret put)/;

describe('npm run deploy', () => {
  it('prints the plan with no Cloudflare credentials, through the real wrangler, and changes nothing', async () => {
    const { toml } = workdir();
    const before = readFileSync(toml, 'utf8');
    const { code, out } = await run(['--dry-run', '--config', toml], {});
    expect(code).toBe(0);
    expect(out).toContain('No Cloudflare credentials: whether each resource exists is unknown.');
    for (const line of [
      'D1 DB (cairn): unknown, wrangler.toml has no id yet',
      'D1 DB_1 (cairn-shard-1): unknown',
      'Vectorize cairn-observations (1024 dimensions, cosine): unknown',
      'metadata index project (string): unknown',
      'metadata index type (string): unknown',
      'R2: no bucket bound',
      'secret CAIRN_ADMIN_SECRET: unknown',
      'npx wrangler d1 create cairn   (if missing)',
      'npx wrangler vectorize create cairn-observations --dimensions=1024 --metric=cosine',
      'npx wrangler vectorize create-metadata-index cairn-observations --propertyName=project --type=string',
      'npx wrangler d1 migrations apply DB --remote',
      'npx wrangler d1 migrations apply DB_1 --remote',
      'npx wrangler deploy --secrets-file',
      'POST <worker url>/api/admin/teams',
    ])
      expect(out).toContain(line);
    // The metadata indexes come before anything that could insert a vector (the deploy).
    expect(out.indexOf('create-metadata-index cairn-observations --propertyName=type')).toBeLessThan(
      out.indexOf('npx wrangler deploy'),
    );
    expect(readFileSync(toml, 'utf8')).toBe(before);
  });

  it('with credentials, says what exists and only reads', async () => {
    const { toml } = workdir();
    const fake = fakeAccount({
      d1: [{ name: 'cairn', uuid: '11111111-2222-3333-4444-555555555555' }],
      worker: { secrets: ['CAIRN_ADMIN_SECRET'] },
    });
    const { code, out } = await run(['--dry-run', '--config', toml], {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: fake.stateFile,
    });
    expect(code).toBe(0);
    expect(out).toContain('D1 DB (cairn): exists, wrangler.toml has no id yet');
    expect(out).toContain('D1 DB_1 (cairn-shard-1): missing');
    expect(out).toContain('Vectorize cairn-observations (1024 dimensions, cosine): missing');
    expect(out).toContain('secret CAIRN_ADMIN_SECRET: exists');
    expect(out).toContain('npx wrangler d1 create cairn-shard-1\n');
    expect(out).not.toContain('npx wrangler d1 create cairn\n');
    expect(
      fake
        .read()
        .calls.map(cmd)
        .filter((c) => NOT_READS.test(c)),
    ).toEqual([]);
  });

  it('does the first deploy from nothing: resources, ids, secrets with the deploy, migrations on every database, then the team and the cairn login line', async () => {
    const { toml } = workdir();
    const cairn = await fakeCairn();
    const fake = fakeAccount({ url: cairn.url });
    const env = {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: fake.stateFile,
      ANTHROPIC_API_KEY: 'sk-ant-from-ci',
      CAIRN_TEAM: 'acme',
      CAIRN_USER: 'ada',
    };
    const { code, out } = await run(['--config', toml, '--skip-build'], env);
    expect(code, out).toBe(0);
    const account = fake.read();
    const writes = account.calls.map(cmd).filter((c) => NOT_READS.test(c));
    expect(writes).toEqual([
      'd1 create cairn',
      'd1 create cairn-shard-1',
      'vectorize create cairn-observations --dimensions=1024 --metric=cosine',
      'vectorize create-metadata-index cairn-observations --propertyName=project --type=string',
      'vectorize create-metadata-index cairn-observations --propertyName=type --type=string',
      'd1 migrations apply DB --remote --config',
      'd1 migrations apply DB_1 --remote --config',
      'deploy --config --secrets-file',
    ]);
    // wrangler applies without asking: the script asked (or, here, runs unattended).
    expect(account.calls.filter((c) => c.argv[1] === 'migrations').map((c) => c.ci)).toEqual(['true', 'true']);
    const text = readFileSync(toml, 'utf8');
    for (const d of account.d1) expect(text).toContain(`database_id = "${d.uuid}"`);
    // Secrets travel with the deploy, in a file that is gone afterwards.
    const deployCall = account.calls.find((c) => c.argv[0] === 'deploy')!;
    const admin = deployCall.secrets!.CAIRN_ADMIN_SECRET!;
    expect(deployCall.secrets).toEqual({ CAIRN_ADMIN_SECRET: admin, ANTHROPIC_API_KEY: 'sk-ant-from-ci' });
    expect(admin).toMatch(/^[\w-]{43}$/);
    expect(out).not.toContain(admin);
    expect(out).toContain('CAIRN_ADMIN_SECRET was not set: one was generated');
    expect(cairn.seen).toEqual([{ auth: `Bearer ${admin}`, body: { team: 'acme', user: 'ada', device: 'laptop' } }]);
    expect(out).toContain(
      `npx cairn login --url ${cairn.url} --token cairn_firsttoken0000000000000000000000000000 && npx cairn install`,
    );
  });

  it('deploys again without creating anything or asking for a team, keeping the ids it wrote', async () => {
    const { toml } = workdir();
    const cairn = await fakeCairn();
    const fake = fakeAccount({ url: cairn.url });
    const env = {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: fake.stateFile,
      CAIRN_TEAM: 'acme',
      CAIRN_USER: 'ada',
    };
    expect((await run(['--config', toml, '--skip-build'], env)).code).toBe(0);
    const first = readFileSync(toml, 'utf8');
    const account = fake.read();
    writeFileSync(fake.stateFile, JSON.stringify({ ...account, teams: 1, calls: [] }));
    const again = await run(['--config', toml, '--skip-build'], env);
    expect(again.code, again.out).toBe(0);
    expect(
      fake
        .read()
        .calls.map(cmd)
        .filter((c) => NOT_READS.test(c)),
    ).toEqual([
      'd1 migrations apply DB --remote --config',
      'd1 migrations apply DB_1 --remote --config',
      'deploy --config',
    ]);
    expect(readFileSync(toml, 'utf8')).toBe(first);
    expect(again.out).toContain('1 team(s) already here');
    expect(cairn.seen).toHaveLength(1);
  });

  it('remakes an empty index of the wrong shape (as the Deploy button provisions one) and refuses to touch one holding vectors', async () => {
    const { toml } = workdir();
    const shape = { dimensions: 768, metric: 'euclidean', metadata: [] };
    const empty = fakeAccount({ teams: 1, vectorize: { 'cairn-observations': { ...shape } } });
    const env = (f: ReturnType<typeof fakeAccount>) => ({
      PATH: `${f.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: f.stateFile,
    });
    const ok = await run(['--config', toml, '--skip-build'], env(empty));
    expect(ok.code, ok.out).toBe(0);
    expect(empty.read().vectorize['cairn-observations']).toMatchObject({
      dimensions: 1024,
      metric: 'cosine',
      metadata: [{ propertyName: 'project' }, { propertyName: 'type' }],
    });
    const full = fakeAccount({ teams: 1, vectorize: { 'cairn-observations': { ...shape, vectorCount: 10 } as never } });
    const refused = await run(['--config', toml, '--skip-build'], env(full));
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('exists with 768 dimensions / euclidean; cairn needs 1024 / cosine');
    expect(
      full
        .read()
        .calls.map(cmd)
        .filter((c) => NOT_READS.test(c) || c.startsWith('vectorize delete')),
    ).toEqual([]);
  });

  it('creates the backup bucket when wrangler.toml binds one', async () => {
    const { toml } = workdir((t) => `${t}\n[[r2_buckets]]\nbinding = "BACKUPS"\nbucket_name = "cairn-backups"\n`);
    const fake = fakeAccount({ teams: 1 });
    const { code, out } = await run(['--config', toml, '--skip-build'], {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: fake.stateFile,
    });
    expect(code, out).toBe(0);
    expect(out).toContain('R2 BACKUPS (cairn-backups): missing');
    expect(fake.read().r2).toEqual(['cairn-backups']);
  });

  it('stops before creating or changing anything when a migration would break against a remote D1', async () => {
    const { dir, toml } = workdir();
    mkdirSync(path.join(dir, 'migrations'), { recursive: true });
    writeFileSync(
      path.join(dir, 'migrations', '0099_bad.sql'),
      "-- the team's new table; with a comment D1 splits\nCREATE TABLE x (id INTEGER);\n",
    );
    const fake = fakeAccount({ teams: 1 });
    const { code, out } = await run(['--config', toml, '--skip-build'], {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: fake.stateFile,
    });
    expect(code).toBe(1);
    expect(out).toContain('0099_bad.sql:1: comment-quote');
    expect(fake.read().calls).toEqual([]);
  });

  it('fails the dry run too when a migration would break against a remote D1', async () => {
    const { dir, toml } = workdir();
    writeFileSync(
      path.join(dir, 'migrations', '0099_bad.sql'),
      "CREATE TABLE x (id INTEGER);\n-- the team's new table\n",
    );
    const { code, out } = await run(['--dry-run', '--config', toml], {});
    expect(code).toBe(1);
    expect(out).toContain('0099_bad.sql:2: comment-quote');
    expect(out).not.toContain('Commands:');
  });

  it("creates the D1 databases with the operator's location hint (--location, else CAIRN_D1_LOCATION) and refuses an unknown one", async () => {
    const env = (f: ReturnType<typeof fakeAccount>, extra: Record<string, string> = {}) => ({
      PATH: `${f.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: f.stateFile,
      ...extra,
    });
    const creates = (f: ReturnType<typeof fakeAccount>) =>
      f
        .read()
        .calls.filter((c) => c.argv[0] === 'd1' && c.argv[1] === 'create')
        .map((c) => c.argv.join(' '));

    const plan = await run(['--dry-run', '--config', workdir().toml, '--location', 'weur'], {});
    expect(plan.code, plan.out).toBe(0);
    expect(plan.out).toContain('npx wrangler d1 create cairn --location=weur   (if missing)');
    expect(plan.out).toContain('D1 location hint for new databases: weur (western Europe)');

    const flagged = fakeAccount({ teams: 1 });
    const a = await run(['--config', workdir().toml, '--skip-build', '--location', 'weur'], env(flagged));
    expect(a.code, a.out).toBe(0);
    expect(creates(flagged)).toEqual(['d1 create cairn --location=weur', 'd1 create cairn-shard-1 --location=weur']);
    expect(flagged.read().d1.map((d) => (d as { location?: string }).location)).toEqual(['weur', 'weur']);

    const configured = fakeAccount({ teams: 1 });
    const b = await run(['--config', workdir().toml, '--skip-build'], env(configured, { CAIRN_D1_LOCATION: 'apac' }));
    expect(b.code, b.out).toBe(0);
    expect(creates(configured)).toEqual(['d1 create cairn --location=apac', 'd1 create cairn-shard-1 --location=apac']);

    const wrong = fakeAccount({ teams: 1 });
    const c = await run(['--config', workdir().toml, '--skip-build', '--location', 'mars'], env(wrong));
    expect(c.code).toBe(1);
    expect(c.out).toContain('Unknown D1 location "mars": use one of wnam, enam, weur, eeur, apac, oc');
    expect(
      wrong
        .read()
        .calls.map(cmd)
        .filter((x) => NOT_READS.test(x)),
    ).toEqual([]);
  });

  it('rehearses the migrations on a throwaway D1 database and deletes it', async () => {
    const { toml } = workdir();
    const fake = fakeAccount();
    const { code, out } = await run(['--rehearse-migrations', '--config', toml], {
      PATH: `${fake.bin}:${process.env.PATH}`,
      FAKE_WRANGLER_STATE: fake.stateFile,
    });
    expect(code, out).toBe(0);
    const calls = fake.read().calls;
    const name = calls.find((c) => c.argv[1] === 'create')!.argv[2]!;
    expect(name).toMatch(/^cairn-rehearsal-/);
    expect(calls.map((c) => c.argv.slice(0, 3).join(' '))).toEqual([
      'd1 create ' + name,
      'd1 list --json',
      'd1 migrations apply',
      'd1 execute REHEARSAL',
      `d1 delete ${name}`,
    ]);
    expect(calls.find((c) => c.argv[1] === 'migrations')!.config).toContain(`database_name = "${name}"`);
    expect(fake.read().d1).toEqual([]);
    expect(out).toContain(`Rehearsal passed: every migration applied to ${name}`);
  });
});
