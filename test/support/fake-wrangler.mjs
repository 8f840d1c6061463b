#!/usr/bin/env node
// A fake `wrangler` for the deploy script's tests: put on PATH as `wrangler`, it keeps an account's resources in the
// JSON file named by FAKE_WRANGLER_STATE, records every call (argv, and the secrets file `deploy` was given), and
// answers as wrangler 4.86 does: its --json outputs (d1 list, vectorize get/list-metadata-index, r2 bucket info,
// secret list, d1 execute, whoami) and the lines the script reads from text output (`Deployed <name> triggers`
// followed by the Worker's URL). Refusals are printed the way wrangler prints an API error, with a non-zero exit.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.FAKE_WRANGLER_STATE;
const state = JSON.parse(readFileSync(file, 'utf8'));
const argv = process.argv.slice(2);
const call = { argv, ci: process.env.CI ?? null };
state.calls.push(call);
const save = () => writeFileSync(file, JSON.stringify(state, null, 2));
const out = (text) => process.stdout.write(`${text}\n`);
const apiError = (path, message, code) => {
  save();
  process.stderr.write(`✘ [ERROR] A request to the Cloudflare API (${path}) failed.\n\n  ${message} [code: ${code}]\n`);
  process.exit(1);
};
const flag = (name) => {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i === -1) return undefined;
  return argv[i].includes('=') ? argv[i].slice(argv[i].indexOf('=') + 1) : argv[i + 1];
};
const [a, b, c] = argv;

if (a !== 'whoami' && !state.loggedIn) {
  save();
  process.stderr.write('✘ [ERROR] You are not authenticated. Please run `wrangler login`.\n');
  process.exit(1);
}

if (a === 'whoami') {
  save();
  if (!state.loggedIn) {
    out(JSON.stringify({ loggedIn: false }));
    process.exit(1);
  }
  out(
    JSON.stringify({
      loggedIn: true,
      authType: 'User API Token',
      email: 'ops@example.com',
      accounts: [{ name: 'Acme', id: 'acc0' }],
      tokenPermissions: [],
    }),
  );
} else if (a === 'd1' && b === 'list') {
  out(
    JSON.stringify(
      state.d1.map((d) => ({
        uuid: d.uuid,
        name: d.name,
        created_at: '2026-11-30T09:00:00.000Z',
        version: 'production',
        num_tables: 0,
        file_size: 12288,
      })),
      null,
      2,
    ),
  );
} else if (a === 'd1' && b === 'create') {
  // wrangler 4.86 takes these location hints (its LOCATION_CHOICES) and refuses any other before calling the API.
  const location = flag('location');
  if (location !== undefined && !['weur', 'eeur', 'apac', 'oc', 'wnam', 'enam'].includes(location)) {
    save();
    process.stderr.write(
      `✘ [ERROR] Invalid values:\n  Argument: location, Given: "${location}", Choices: "weur", "eeur", "apac", "oc", "wnam", "enam"\n`,
    );
    process.exit(1);
  }
  const d = { name: c, uuid: randomUUID(), location: location ?? null };
  state.d1.push(d);
  out(
    `✅ Successfully created DB '${c}' in region ${(location ?? 'weur').toUpperCase()}\nCreated your new D1 database.\n\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "${c}"\ndatabase_id = "${d.uuid}"`,
  );
} else if (a === 'd1' && b === 'delete') {
  state.d1 = state.d1.filter((d) => d.name !== c);
  out(`✅ Deleted '${c}' successfully.`);
} else if (a === 'd1' && b === 'migrations' && c === 'apply') {
  call.config = flag('config') ? readFileSync(flag('config'), 'utf8') : null;
  out('Migrations to be applied:\n┌──────────────┐\n│ name         │\n└──────────────┘\n✅ applied');
} else if (a === 'd1' && b === 'execute') {
  const sql = flag('command') ?? '';
  const results = /FROM teams/i.test(sql)
    ? [{ n: state.teams }]
    : /sqlite_master/.test(sql)
      ? state.schema.map((name) => ({ type: name.endsWith('_ai') ? 'trigger' : 'table', name }))
      : [];
  out(JSON.stringify([{ results, success: true, meta: { duration: 1 } }], null, 2));
} else if (a === 'vectorize' && b === 'get') {
  const v = state.vectorize[c];
  if (!v) apiError(`/accounts/acc0/vectorize/v2/indexes/${c}`, 'vectorize.index.not_found', 3000);
  out(
    JSON.stringify(
      {
        name: c,
        config: { dimensions: v.dimensions, metric: v.metric },
        created_on: '2026-11-30T09:00:00Z',
        modified_on: '2026-11-30T09:00:00Z',
      },
      null,
      2,
    ),
  );
} else if (a === 'vectorize' && b === 'info') {
  const v = state.vectorize[c];
  out(
    JSON.stringify(
      {
        dimensions: v.dimensions,
        vectorCount: v.vectorCount ?? 0,
        processedUpToDatetime: null,
        processedUpToMutation: null,
      },
      null,
      2,
    ),
  );
} else if (a === 'vectorize' && b === 'delete') {
  delete state.vectorize[c];
  out(`✅ Deleted index ${c}`);
} else if (a === 'vectorize' && b === 'create') {
  state.vectorize[c] = { dimensions: Number(flag('dimensions')), metric: flag('metric'), metadata: [] };
  out(`✅ Successfully created a new Vectorize index: '${c}'`);
} else if (a === 'vectorize' && b === 'list-metadata-index') {
  out(JSON.stringify(state.vectorize[c].metadata, null, 2));
} else if (a === 'vectorize' && b === 'create-metadata-index') {
  state.vectorize[c].metadata.push({ propertyName: flag('propertyName'), indexType: flag('type') });
  out(
    `📋 Creating metadata index...\n✅ Successfully enqueued metadata index creation request. Mutation changeset identifier: ${randomUUID()}.`,
  );
} else if (a === 'r2' && b === 'bucket' && c === 'info') {
  const name = argv[3];
  if (!state.r2.includes(name))
    apiError(`/accounts/acc0/r2/buckets/${name}`, 'The specified bucket does not exist.', 10006);
  out(
    JSON.stringify({
      name,
      created: '2026-11-30T09:00:00Z',
      location: 'WEUR',
      default_storage_class: 'Standard',
      object_count: '0',
      bucket_size: '0 B',
    }),
  );
} else if (a === 'r2' && b === 'bucket' && c === 'create') {
  state.r2.push(argv[3]);
  out(`Creating bucket '${argv[3]}'...\n✅ Created bucket '${argv[3]}' with default storage class of Standard.`);
} else if (a === 'secret' && b === 'list') {
  if (!state.worker) {
    save();
    process.stderr.write(
      `✘ [ERROR] Worker "${state.name}" not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.\n`,
    );
    process.exit(1);
  }
  out(
    JSON.stringify(
      state.worker.secrets.map((name) => ({ name, type: 'secret_text' })),
      null,
      '  ',
    ),
  );
} else if (a === 'deploy') {
  const secretsFile = flag('secrets-file');
  call.secrets = secretsFile ? JSON.parse(readFileSync(secretsFile, 'utf8')) : null;
  state.worker ??= { secrets: [] };
  for (const k of Object.keys(call.secrets ?? {})) if (!state.worker.secrets.includes(k)) state.worker.secrets.push(k);
  out(
    `Total Upload: 512.00 KiB / gzip: 120.00 KiB\nUploaded ${state.name} (1.20 sec)\nDeployed ${state.name} triggers (0.40 sec)\n  ${state.url}\n  schedule: 17 3 * * *\nCurrent Version ID: ${randomUUID()}`,
  );
} else {
  save();
  process.stderr.write(`fake wrangler: no answer for ${argv.join(' ')}\n`);
  process.exit(2);
}
save();
