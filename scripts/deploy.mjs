// npm run deploy [-- --dry-run] [--yes] [--location HINT] [--team NAME --user HANDLE] [--url URL] [--rehearse-migrations]
// The whole deploy, first time and every time after, and safe to run again: the D1 databases (found by name or
// created, their ids written into wrangler.toml), the Vectorize index and its metadata indexes (before any vector
// is inserted), the R2 bucket for backups when one is bound, missing secrets (from the environment, asked for, or
// generated), migrations checked for remote D1 and applied to every database, the build, `wrangler deploy`, and on
// the first deploy the operator's team with the `cairn login` line. `--dry-run` needs no Cloudflare credentials:
// it prints each resource, whether it exists (unknown without credentials), and the commands it would run.
// `--rehearse-migrations` applies every migration to a throwaway D1 database and deletes it (docs/operations.md).
// `--location` (or CAIRN_D1_LOCATION, or the answer to a prompt) is the location hint of the D1 databases it creates:
// without one D1 puts a database near where the create request came from, a CI runner's region for Workers Builds.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PLACEHOLDER_ID, VECTOR_INDEX, readWranglerToml, withDatabaseId } from './deploy/config.mjs';
import { createWrangler, deployedUrls } from './deploy/wrangler.mjs';
import { lintMigrationsDir } from './lint-migrations.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({
  options: {
    'dry-run': { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
    'skip-build': { type: 'boolean' },
    config: { type: 'string' },
    team: { type: 'string' },
    user: { type: 'string' },
    device: { type: 'string' },
    url: { type: 'string' },
    'rehearse-migrations': { type: 'boolean' },
    location: { type: 'string' },
  },
});
/** D1's location hints (`wrangler d1 create --location`, the choices wrangler 4.86 accepts). */
const LOCATIONS = {
  wnam: 'western North America',
  enam: 'eastern North America',
  weur: 'western Europe',
  eeur: 'eastern Europe',
  apac: 'Asia-Pacific',
  oc: 'Oceania',
};
const dry = Boolean(opt['dry-run']);
const configPath = path.resolve(opt.config ?? path.join(ROOT, 'wrangler.toml'));
const configArgs = opt.config ? ['--config', configPath] : [];
const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY && !process.env.CI && !process.env.WORKERS_CI);
const say = (line = '') => process.stdout.write(`${line}\n`);
const w = createWrangler(ROOT);

/** Secrets the Worker reads (src/env.ts): the operator's, and the observer's key for the configured provider. */
function secretsWanted(vars) {
  const provider = (process.env.OBSERVER_PROVIDER ?? vars.OBSERVER_PROVIDER ?? '').trim().toLowerCase();
  const key =
    provider === 'openai'
      ? 'OPENAI_API_KEY'
      : provider === 'workers-ai' || provider === 'heuristic'
        ? null
        : 'ANTHROPIC_API_KEY';
  return [
    {
      name: 'CAIRN_ADMIN_SECRET',
      required: true,
      why: "the operator's secret: creates teams, moves them, reads every team's health",
    },
    ...(key
      ? [
          {
            name: key,
            required: false,
            why: provider
              ? "the observer's key"
              : "the observer's key; without one the heuristic observer runs (or set OBSERVER_PROVIDER=workers-ai)",
          },
        ]
      : []),
  ];
}

async function ask(question) {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

function lintOrExit(dir) {
  const problems = lintMigrationsDir(dir);
  if (!problems.length) return;
  for (const p of problems) say(`${p.file}:${p.line}: ${p.rule}: ${p.message}`);
  say('Migrations would break against a remote D1; fix them first (npm run db:check).');
  process.exit(1);
}

/**
 * The location hint for new D1 databases: the flag, else CAIRN_D1_LOCATION, else (interactive, when one will be
 * created) the operator's answer. Empty: none (D1 places it near this machine). A hint D1 does not know stops here.
 */
async function locationHint(willCreate) {
  let hint = (opt.location ?? process.env.CAIRN_D1_LOCATION ?? '').trim().toLowerCase();
  if (!hint && willCreate && interactive && !dry) {
    const list = Object.entries(LOCATIONS)
      .map(([k, v]) => `${k} (${v})`)
      .join(', ');
    hint = (await ask(`Where should the D1 databases live? ${list}; Enter: near this machine: `)).toLowerCase();
  }
  if (hint && !Object.hasOwn(LOCATIONS, hint)) {
    say(
      `Unknown D1 location "${hint}": use one of ${Object.keys(LOCATIONS).join(', ')} (--location or CAIRN_D1_LOCATION).`,
    );
    process.exit(1);
  }
  return hint;
}

/** `wrangler d1 create` arguments for `name` with the location hint, if any. */
const d1CreateArgs = (name, hint) => ['d1', 'create', name, ...(hint ? [`--location=${hint}`] : [])];

async function rehearse(config) {
  const migrations = path.resolve(path.dirname(configPath), config.d1[0]?.migrations_dir ?? 'migrations');
  const name = `cairn-rehearsal-${Date.now().toString(36)}`;
  const tmp = mkdtempSync(path.join(tmpdir(), 'cairn-rehearsal-'));
  const toml = path.join(tmp, 'wrangler.toml');
  const hint = await locationHint(!dry);
  const steps = [
    `wrangler ${d1CreateArgs(name, hint).join(' ')}`,
    `wrangler d1 migrations apply REHEARSAL --remote --config <temporary wrangler.toml naming ${name}, migrations_dir ${migrations}>`,
    'wrangler d1 execute REHEARSAL --remote --json --command "SELECT type, name FROM sqlite_master …" (every table and trigger is there)',
    `wrangler d1 delete ${name} -y`,
  ];
  if (dry) {
    say('Migration rehearsal (dry run: nothing is created):');
    for (const s of steps) say(`  npx ${s}`);
    return;
  }
  lintOrExit(migrations);
  await w.must(d1CreateArgs(name, hint));
  try {
    const db = (await w.d1List()).find((d) => d.name === name);
    if (!db) throw new Error(`${name} was created but d1 list does not show it`);
    writeFileSync(
      toml,
      `name = "cairn-rehearsal"\n\n[[d1_databases]]\nbinding = "REHEARSAL"\ndatabase_name = "${name}"\ndatabase_id = "${db.uuid}"\nmigrations_dir = ${JSON.stringify(migrations)}\n`,
    );
    await w.must(['d1', 'migrations', 'apply', 'REHEARSAL', '--remote', '--config', toml], {
      tee: true,
      extraEnv: { CI: 'true' },
    });
    const rows = await w.query(
      'REHEARSAL',
      "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY name",
      ['--config', toml],
    );
    const have = new Set(rows.map((r) => r.name));
    const missing = [
      'teams',
      'observations',
      'observations_fts',
      'observations_fts_ai',
      'summaries_fts',
      'prompts_fts',
      'd1_migrations',
    ].filter((t) => !have.has(t));
    if (missing.length) throw new Error(`the rehearsal database lacks ${missing.join(', ')}`);
    say(`Rehearsal passed: every migration applied to ${name} (${rows.length} tables and triggers).`);
  } finally {
    await w.run(['d1', 'delete', name, '-y']);
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * What the account holds, read before anything is changed: each resource exists, is missing, or is unknown
 * (null: no credentials). A Vectorize index of the wrong shape is refused here, unless it is empty (remade).
 */
async function discover(config, known) {
  const dbs = known ? await w.d1List() : null;
  const d1 = config.d1.map((d) => ({
    ...d,
    found: dbs ? (dbs.find((x) => x.name === d.database_name) ?? false) : null,
  }));
  const vectorize = [];
  for (const v of config.vectorize) {
    let index = known ? await w.vectorizeGet(v.index_name) : null;
    let remake = false;
    if (
      index &&
      (index.config?.dimensions !== VECTOR_INDEX.dimensions || index.config?.metric !== VECTOR_INDEX.metric)
    ) {
      // One made by other rules (the Deploy to Cloudflare button provisions it from the name alone) is remade
      // while it is still empty; one that holds vectors is never touched.
      if ((await w.vectorizeInfo(v.index_name)).vectorCount !== 0) {
        throw new Error(
          `Vectorize ${v.index_name} exists with ${index.config?.dimensions} dimensions / ${index.config?.metric}; cairn needs ${VECTOR_INDEX.dimensions} / ${VECTOR_INDEX.metric} (bge-m3). It holds vectors, so it is left alone: delete it or name another index_name in wrangler.toml.`,
        );
      }
      remake = true;
    }
    const have = known && index && !remake ? (await w.metadataIndexes(v.index_name)).map((m) => m.propertyName) : [];
    if (remake) index = { ...index, remake };
    vectorize.push({
      ...v,
      exists: known ? Boolean(index) && !remake : null,
      remake,
      metadata: VECTOR_INDEX.metadata.map((m) => ({ ...m, exists: known ? have.includes(m.property) : null })),
    });
  }
  const r2 = [];
  for (const b of config.r2) r2.push({ ...b, exists: known ? await w.r2Exists(b.bucket_name) : null });
  const secretNames = known ? await w.secretNames() : null;
  const secrets = secretsWanted(config.vars).map((x) => ({
    ...x,
    exists: secretNames ? secretNames.includes(x.name) : null,
  }));
  return { d1, vectorize, r2, secrets };
}

async function main() {
  let text = readFileSync(configPath, 'utf8');
  const config = readWranglerToml(text);
  if (opt['rehearse-migrations']) return rehearse(config);
  // Migrations a remote D1 would mishandle stop the deploy before anything is created or changed, and fail the
  // dry run too: a plan that cannot be carried out is no plan.
  const migrations = path.resolve(path.dirname(configPath), config.d1[0]?.migrations_dir ?? 'migrations');
  lintOrExit(migrations);
  const who = await w.whoami();
  const known = Boolean(who.loggedIn);
  if (!known && !dry) {
    say(
      'Not logged in to Cloudflare: run `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then `npm run deploy` again.',
    );
    process.exit(1);
  }
  say(dry ? 'Deploy plan (dry run: nothing is created or changed).' : `Deploying ${config.name} to Cloudflare.`);
  say(
    known
      ? `Cloudflare account: ${who.accounts?.map((a) => a.name).join(', ') || who.email || 'logged in'}`
      : 'No Cloudflare credentials: whether each resource exists is unknown.',
  );
  const found = await discover(config, known);
  const hint = await locationHint(found.d1.some((d) => !d.found));

  // The plan: each resource and its state, then every command in the order it runs.
  const state = (exists) => (exists === null ? 'unknown' : exists ? 'exists' : 'missing');
  const ifMissing = (exists) => (exists === null ? '   (if missing)' : '');
  const commands = [];
  say('Resources:');
  for (const d of found.d1) {
    say(
      `  D1 ${d.binding} (${d.database_name}): ${state(d.found === null ? null : Boolean(d.found))}${PLACEHOLDER_ID.test(d.database_id ?? '') ? ', wrangler.toml has no id yet' : ''}`,
    );
    if (!d.found) commands.push(`npx wrangler ${d1CreateArgs(d.database_name, hint).join(' ')}${ifMissing(d.found)}`);
  }
  if (found.d1.some((d) => !d.found))
    say(
      hint
        ? `  D1 location hint for new databases: ${hint} (${LOCATIONS[hint]})`
        : `  D1 location hint: none, so a new database is placed near where this runs (--location ${Object.keys(LOCATIONS).join('|')}, or CAIRN_D1_LOCATION)`,
    );
  for (const v of found.vectorize) {
    say(
      `  Vectorize ${v.index_name} (${VECTOR_INDEX.dimensions} dimensions, ${VECTOR_INDEX.metric}): ${v.remake ? 'exists empty with another shape: remade' : state(v.exists)}`,
    );
    if (v.remake) commands.push(`npx wrangler vectorize delete ${v.index_name} --force`);
    if (!v.exists)
      commands.push(
        `npx wrangler vectorize create ${v.index_name} --dimensions=${VECTOR_INDEX.dimensions} --metric=${VECTOR_INDEX.metric}${ifMissing(v.exists)}`,
      );
    for (const m of v.metadata) {
      say(`    metadata index ${m.property} (${m.type}): ${state(m.exists)}`);
      if (!m.exists)
        commands.push(
          `npx wrangler vectorize create-metadata-index ${v.index_name} --propertyName=${m.property} --type=${m.type}${ifMissing(m.exists)}`,
        );
    }
  }
  if (!found.r2.length)
    say('  R2: no bucket bound (the scheduled backup is off; README "Your data" says how to turn it on)');
  for (const b of found.r2) {
    say(`  R2 ${b.binding} (${b.bucket_name}): ${state(b.exists)}`);
    if (!b.exists) commands.push(`npx wrangler r2 bucket create ${b.bucket_name}${ifMissing(b.exists)}`);
  }
  say(
    `  migrations (${path.relative(process.cwd(), migrations) || '.'}): ${readdirSync(migrations).filter((f) => f.endsWith('.sql')).length} files, safe for a remote D1 (scripts/lint-migrations.mjs)`,
  );
  for (const x of found.secrets) {
    const from = process.env[x.name]
      ? 'from the environment'
      : x.required
        ? interactive
          ? 'asked for (Enter: generate one)'
          : 'generated'
        : interactive
          ? 'asked for (Enter: none)'
          : 'left unset';
    say(`  secret ${x.name}: ${state(x.exists)}${x.exists ? '' : ` → ${from}`} (${x.why})`);
  }
  for (const d of config.d1) commands.push(`npx wrangler d1 migrations apply ${d.binding} --remote`);
  if (!opt['skip-build']) commands.push('npm run build');
  commands.push(
    `npx wrangler deploy${found.secrets.some((x) => !x.exists) ? ' --secrets-file <a temporary file, 0600, deleted after>' : ''}`,
  );
  commands.push(
    'first deploy only (no team yet): POST <worker url>/api/admin/teams with CAIRN_ADMIN_SECRET, then print the `cairn login` line',
  );
  say('Commands:');
  for (const [i, c] of commands.entries()) say(`  ${i + 1}. ${c}`);
  if (dry) return;
  if (interactive && !opt.yes && (await ask('Proceed? [Y/n] ')).toLowerCase().startsWith('n')) process.exit(1);

  // 1. D1: found by name, else created; the id goes into wrangler.toml (commit it: it names your databases).
  for (const d of found.d1) {
    let id = d.found?.uuid;
    if (!d.found) {
      await w.must(d1CreateArgs(d.database_name, hint));
      id = (await w.d1List()).find((x) => x.name === d.database_name)?.uuid;
      if (!id) throw new Error(`${d.database_name} was created but d1 list does not show it`);
    }
    if (id !== d.database_id) {
      text = withDatabaseId(text, d.binding, id);
      writeFileSync(configPath, text);
      say(
        `  wrote database_id = "${id}" for ${d.binding} into ${path.relative(process.cwd(), configPath) || configPath} (commit it)`,
      );
    }
  }
  // 2. Vectorize, with its metadata indexes before any vector is inserted (vectors inserted earlier are not filtered).
  for (const v of found.vectorize) {
    if (v.remake) await w.must(['vectorize', 'delete', v.index_name, '--force']);
    if (!v.exists)
      await w.must([
        'vectorize',
        'create',
        v.index_name,
        `--dimensions=${VECTOR_INDEX.dimensions}`,
        `--metric=${VECTOR_INDEX.metric}`,
      ]);
    for (const m of v.metadata) {
      if (m.exists) continue;
      await w.must([
        'vectorize',
        'create-metadata-index',
        v.index_name,
        `--propertyName=${m.property}`,
        `--type=${m.type}`,
      ]);
      if (v.exists)
        say(
          `  ${v.index_name} already held vectors: they stay unfiltered by ${m.property} until embedded again (POST /api/admin/jobs {"kind":"embed"}).`,
        );
    }
  }
  // 3. R2 for backups, when bound.
  for (const b of found.r2) if (!b.exists) await w.must(['r2', 'bucket', 'create', b.bucket_name]);
  // 4. Secrets: kept when the Worker has them; else from the environment, asked for, or (the operator's) generated.
  const upload = {};
  let adminSecret = process.env.CAIRN_ADMIN_SECRET || null;
  let generated = false;
  for (const x of found.secrets) {
    if (x.exists) continue;
    let value = process.env[x.name] || '';
    if (!value && interactive) value = await ask(`${x.name} (${x.why}): `);
    if (!value && x.required) {
      value = randomBytes(32).toString('base64url');
      generated = true;
    }
    if (value) upload[x.name] = value;
    if (x.name === 'CAIRN_ADMIN_SECRET') adminSecret = value;
  }
  // 5. Migrations on every database (CI=true: wrangler applies without its own prompt; this script asked already).
  for (const d of config.d1)
    await w.must(['d1', 'migrations', 'apply', d.binding, '--remote', ...configArgs], {
      tee: true,
      extraEnv: { CI: 'true' },
    });
  if (!opt['skip-build']) await runNode(['scripts/build.mjs']);
  // 6. The deploy, with the new secrets in a file that exists only for it.
  let secretsFile = null;
  if (Object.keys(upload).length) {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-secrets-'));
    secretsFile = path.join(dir, 'secrets.json');
    writeFileSync(secretsFile, JSON.stringify(upload), { mode: 0o600 });
    chmodSync(secretsFile, 0o600);
  }
  let deployed;
  try {
    deployed = await w.must(['deploy', ...configArgs, ...(secretsFile ? ['--secrets-file', secretsFile] : [])], {
      tee: true,
    });
  } finally {
    if (secretsFile) rmSync(path.dirname(secretsFile), { recursive: true, force: true });
  }
  const url = (opt.url ?? process.env.CAIRN_URL ?? deployedUrls(deployed.stdout)[0] ?? '').replace(/\/+$/, '');

  // 7. The first deploy creates the operator's team: the directory has none yet.
  const [{ n } = { n: 0 }] = await w.query(config.d1[0].binding, 'SELECT COUNT(*) AS n FROM teams', configArgs);
  say();
  if (generated && interactive)
    say(`CAIRN_ADMIN_SECRET (generated; keep it, cairn will not show it again): ${adminSecret}`);
  else if (generated)
    say(
      "CAIRN_ADMIN_SECRET was not set: one was generated and stored as the Worker's secret. To hold it yourself: npx wrangler secret put CAIRN_ADMIN_SECRET",
    );
  if (Number(n) > 0) {
    say(`Deployed${url ? ` to ${url}` : ''}; ${n} team(s) already here. Health: npx cairn admin health`);
    return;
  }
  await firstTeam(url, adminSecret);
}

async function firstTeam(url, adminSecret) {
  let team = opt.team ?? process.env.CAIRN_TEAM;
  let user = opt.user ?? process.env.CAIRN_USER;
  if (interactive) {
    team ||= (await ask('Name your team (letters, digits, . _ -) [team]: ')) || 'team';
    user ||= (await ask(`Your handle [${process.env.USER || 'me'}]: `)) || process.env.USER || 'me';
  }
  const create = `npx cairn admin team create --team <team> --user <you> --device <this machine>   (with CAIRN_ADMIN_SECRET and --url ${url || '<worker url>'})`;
  if (!url || !adminSecret || !team || !user) {
    say(`No team yet. Create the first one: ${create}`);
    return;
  }
  const device = opt.device ?? process.env.CAIRN_DEVICE ?? 'laptop';
  const res = await fetch(`${url}/api/admin/teams`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminSecret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ team, user, device }),
  });
  const body = await res.json().catch(() => ({}));
  if (res.status !== 201 || !body.token) {
    say(`The team could not be created (${res.status} ${body.error?.code ?? ''}); try: ${create}`);
    process.exit(1);
  }
  say(`Team ${team} created; ${user} is its owner. On this machine:`);
  say(`  npx cairn login --url ${url} --token ${body.token} && npx cairn install`);
  say(
    `On any other machine: curl -fsS ${url}/install/cairn.mjs -o /tmp/cairn.mjs && node /tmp/cairn.mjs login --url ${url} --token <a device token: npx cairn admin devices enroll <name>>`,
  );
}

function runNode(args) {
  return import('node:child_process').then(({ spawnSync }) => {
    say(`$ node ${args.join(' ')}`);
    const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  });
}

main().catch((err) => {
  say(`deploy failed: ${err.message}`);
  process.exit(1);
});
