// Seeded mutations of the transfer paths (issue 27): NDJSON import parts, team-move requests and export
// parameters, for the seeded fuzz (transfer-fuzz.slow.test.ts, a few dozen cases) and the long one (fuzz.slow.test.ts,
// rounds until a deadline). Every answer must be under 500, every refusal a 4xx with a stable snake_case code
// (the same body sent again answers the same code), and nothing stored may be harmed: another team's rows, a
// teammate's rows and the importer's own earlier rows are read from both databases before and after.
import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { startJob } from '../../../src/jobs/start';
import { moveJob } from '../../../src/transfer/move-job';
import { ExportRecord } from '../../../src/transfer/records';
import { ADMIN_SECRET, call, fresh, type TestIdentity } from '../support/http';
import { importNow } from '../support/import';
import { finishJob, lane } from '../support/jobs';
import { idsOf } from '../support/seed';
import { initEvent, send, toolEvent } from '../pipeline/support';
import { addTeammate, newOwner, type Enrolled } from '../teams/support';

export type Rng = () => number;
export function rngFrom(seed: number): Rng {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}
const pick = <T>(r: Rng, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
const int = (r: Rng, max: number) => Math.floor(r() * max);

const T0 = Date.parse('2026-05-04T09:00:00Z');
const CODE = /^[a-z]+(?:_[a-z0-9]+)*$/;

export interface World {
  a: TestIdentity & { teamId: number; userId: number };
  mia: Enrolled & { userId: number; privateKey: string; session: string; word: string };
  b: TestIdentity & { teamId: number; word: string; project: string; session: string };
  /** The importer's own earlier rows (content hashes), which no later import may change. */
  aHashes: string[];
  aProject: string;
  aSession: string;
}

export interface Failure {
  what: string;
  status?: number;
  detail?: string;
}

const ndjson = (records: unknown[]) => records.map((x) => JSON.stringify(x)).join('\n');
// The part's import job run to its end (support/import.ts): what the client sees after following it.
/**
 * An import request that waits out the ingest rate limit: a 429 says nothing about the body (a quiet machine sends
 * the fuzz's hundreds of parts inside one minute's window), so the body is judged on the answer after the window.
 * A 429 without Retry-After is handed back, to be judged (and fail) like any other answer.
 */
async function importReq(token: string, body: Parameters<typeof importNow>[1]): Promise<Response> {
  for (let waits = 0; ; waits++) {
    const res = await importNow(token, body);
    const after = Number(res.headers.get('retry-after'));
    if (res.status !== 429 || !(after > 0) || waits >= 3) return res;
    await res.body?.cancel();
    await new Promise((done) => setTimeout(done, Math.min(after, 61) * 1000));
  }
}

const project = (key: string, visibility = 'team', owner: string | null = null) => ({
  kind: 'project',
  key,
  visibility,
  owner,
  created_at: T0,
});
const session = (key: string, projectKey: string, user: string) => ({
  kind: 'session',
  session_key: key,
  project: projectKey,
  user,
  platform: 'claude-code',
  prompt_count: 1,
  started_at: T0,
  ended_at: null,
});
const at = (key: string, author: string, n = 1) => ({
  session_key: key,
  prompt_number: n,
  prompt_id: null,
  author,
  created_at: T0 + n,
});
const observation = (key: string, author: string, title: string, hash: string) => ({
  kind: 'observation',
  ...at(key, author),
  type: 'discovery',
  title,
  subtitle: null,
  facts: [`${title} fact`],
  narrative: title,
  concepts: [],
  files_read: [],
  files_modified: ['src/a.ts'],
  discovery_tokens: 3,
  content_hash: hash,
  agent_id: null,
  agent_type: null,
  source: 'observer',
});

/** Team A (the importer, an owner, with a member mia who has a private project) and team B on the same database. */
export async function makeWorld(): Promise<World> {
  const a = await newOwner();
  const aIds = await idsOf(a);
  const miaHandle = fresh('mia');
  const mia = await addTeammate(a, miaHandle);
  const miaId = (await env.DB.prepare('SELECT id FROM users WHERE team_id = ? AND handle = ?')
    .bind(aIds.teamId, miaHandle)
    .first<{ id: number }>())!.id;
  const miaWord = `miaword${fresh('w').replace(/[^a-z0-9]/g, '')}`;
  const miaSession = fresh('ms');
  const privateKey = `local/${miaHandle}/diary`;
  // Mia's private work through the hooks (a local/ project is private to her), then her own remember.
  expect(
    (await send(mia.token, 'init', initEvent(miaSession, `note the ${miaWord} plan`, { project: 'local/diary' })))
      .status,
  ).toBe(202);
  const remembered = await call('/mcp', {
    token: mia.token,
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream' },
    json: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'remember', arguments: { project: 'local/diary', text: `The ${miaWord} plan is secret.` } },
    },
  });
  expect(remembered.status).toBe(200);

  const b = await newOwner();
  const bIds = await idsOf(b);
  const bWord = `bword${fresh('w').replace(/[^a-z0-9]/g, '')}`;
  const bProject = `github.com/b/${bWord}`;
  const bSession = fresh('bs');
  const bImport = await importReq(
    b.token,
    ndjson([
      project(bProject),
      session(bSession, bProject, b.user),
      observation(bSession, b.user, `B fixed ${bWord}`, `${bWord}-1`),
    ]),
  );
  expect(bImport.status, await bImport.clone().text()).toBe(200);

  const aProject = `github.com/a/${fresh('p')}`;
  const aSession = fresh('as');
  const aHashes = [fresh('ah'), fresh('ah')];
  const aImport = await importReq(
    a.token,
    ndjson([
      project(aProject),
      session(aSession, aProject, a.user),
      ...aHashes.map((h, i) => observation(aSession, a.user, `A original ${i}`, h)),
    ]),
  );
  expect(aImport.status, await aImport.clone().text()).toBe(200);
  return {
    a: { ...a, teamId: aIds.teamId, userId: aIds.userId },
    mia: { ...mia, userId: miaId, privateKey, session: miaSession, word: miaWord },
    b: { ...b, teamId: bIds.teamId, word: bWord, project: bProject, session: bSession },
    aHashes,
    aProject,
    aSession,
  };
}

const SHARDS = ['DB', 'DB_1'] as const;

/**
 * What must never change, read from both databases without ids (a move renumbers rows): team B's rows, every row
 * of team A that mia authored or that lies in her projects, and team A's original observations.
 */
export async function protectedRows(w: World): Promise<string> {
  const out: unknown[] = [];
  {
    // Each query's rows from both databases together, in one order: where a team lives is not what is compared.
    const q = async (sql: string, ...args: unknown[]) => {
      const rows = (
        await Promise.all(
          SHARDS.map((s) =>
            env[s]
              .prepare(sql)
              .bind(...args)
              .all(),
          ),
        )
      ).flatMap((x) => x.results.map((row) => JSON.stringify(row)));
      return rows.sort();
    };
    out.push(
      await q(
        `SELECT 'o' AS t, p.key, s.session_key, o.title, o.narrative, o.facts, o.content_hash, o.type, o.source, o.prompt_number FROM observations o
               JOIN projects p ON p.id = o.project_id JOIN sessions s ON s.id = o.session_id WHERE o.team_id = ? ORDER BY o.content_hash`,
        w.b.teamId,
      ),
      await q('SELECT key, visibility FROM projects WHERE team_id = ? ORDER BY key', w.b.teamId),
      await q(
        'SELECT session_key, platform, prompt_count FROM sessions WHERE team_id = ? ORDER BY session_key',
        w.b.teamId,
      ),
      await q('SELECT handle, role FROM users WHERE team_id = ? ORDER BY handle', w.b.teamId),
      await q(
        `SELECT p.key, s.session_key, o.title, o.narrative, o.content_hash, o.source, o.prompt_number FROM observations o
               JOIN projects p ON p.id = o.project_id JOIN sessions s ON s.id = o.session_id
               WHERE o.team_id = ?1 AND (o.author_user_id = ?2 OR p.owner_user_id = ?2) ORDER BY o.content_hash`,
        w.a.teamId,
        w.mia.userId,
      ),
      await q(
        `SELECT p.key, s.session_key, r.prompt_number, r.text FROM prompts r JOIN projects p ON p.id = r.project_id JOIN sessions s ON s.id = r.session_id
               WHERE r.team_id = ?1 AND (r.author_user_id = ?2 OR p.owner_user_id = ?2) ORDER BY s.session_key, r.prompt_number`,
        w.a.teamId,
        w.mia.userId,
      ),
      await q(
        `SELECT s.session_key, p.key, s.user_id = ?2 AS hers FROM sessions s JOIN projects p ON p.id = s.project_id
               WHERE s.team_id = ?1 AND (s.user_id = ?2 OR p.owner_user_id = ?2) ORDER BY s.session_key`,
        w.a.teamId,
        w.mia.userId,
      ),
      await q(
        'SELECT key, visibility FROM projects WHERE team_id = ? AND owner_user_id = ? ORDER BY key',
        w.a.teamId,
        w.mia.userId,
      ),
      await q(
        `SELECT title, narrative, facts, content_hash, author_user_id FROM observations WHERE team_id = ? AND content_hash IN (${w.aHashes.map(() => '?').join(',')})
               ORDER BY content_hash`,
        w.a.teamId,
        ...w.aHashes,
      ),
    );
  }
  return JSON.stringify(out);
}

/** Rows on either database whose project or session is another team's, or that mia's name is on without her writing them. */
export async function invariantBreaks(w: World): Promise<string[]> {
  const broken: string[] = [];
  for (const s of SHARDS) {
    const d = env[s];
    for (const t of ['observations', 'summaries', 'prompts']) {
      const n = await d
        .prepare(
          `SELECT COUNT(*) AS n FROM ${t} r LEFT JOIN sessions s ON s.id = r.session_id LEFT JOIN projects p ON p.id = r.project_id
         WHERE s.team_id IS NOT r.team_id OR p.team_id IS NOT r.team_id`,
        )
        .first<{ n: number }>();
      if (n!.n) broken.push(`${s}.${t}: ${n!.n} cross-team rows`);
    }
    const planted = await d
      .prepare(
        `SELECT COUNT(*) AS n FROM observations WHERE team_id = ? AND author_user_id = ? AND narrative NOT LIKE ?`,
      )
      .bind(w.a.teamId, w.mia.userId, `%${w.mia.word}%`)
      .first<{ n: number }>();
    if (planted!.n) broken.push(`${s}: ${planted!.n} observations in mia's name she never wrote`);
  }
  const onBoth = await Promise.all(
    SHARDS.map((s) =>
      env[s]
        .prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?')
        .bind(w.a.teamId)
        .first<{ n: number }>(),
    ),
  );
  if (onBoth.every((x) => x!.n > 0)) broken.push('team A has observations on both databases');
  return broken;
}

// --- import parts -------------------------------------------------------------------------------------------

const UNICODE = [
  '\u0000',
  '\uD800',
  '\uDFFF',
  '\u202E',
  '\u200B',
  '\uFEFF',
  'e\u0301',
  '😀',
  '\u{10FFFF}',
  'ｆｕｌｌ',
  '\r',
  '\u2028',
  'İ',
  'ß',
];
const WRONG = [
  null,
  0,
  -1,
  1.5,
  2 ** 53,
  1e308,
  true,
  '',
  'x',
  [],
  {},
  ['a'],
  { a: 1 },
  '2026-01-01',
  Number.MAX_SAFE_INTEGER + 2,
];

/** A valid part of team A's own rows, fresh each time (new keys and hashes). */
function basePart(w: World): Record<string, unknown>[] {
  const key = `github.com/a/${fresh('fz')}`;
  const s = fresh('fs');
  return [
    { kind: 'user', handle: w.a.user, role: 'owner', created_at: T0 },
    project(key),
    session(s, key, w.a.user),
    { kind: 'prompt', ...at(s, w.a.user), text: 'fuzz prompt' },
    observation(s, w.a.user, 'fuzz one', fresh('fh')),
    observation(s, w.a.user, 'fuzz two', fresh('fh')),
    {
      kind: 'summary',
      ...at(s, w.a.user),
      request: 'r',
      investigated: 'i',
      learned: 'l',
      completed: 'c',
      next_steps: '',
      notes: null,
      content_hash: fresh('fh'),
    },
  ];
}

type Mutation = (r: Rng, w: World, part: Record<string, unknown>[]) => string | Uint8Array;

const anyRow = (r: Rng, part: Record<string, unknown>[]) => pick(r, part);
const rowOf = (part: Record<string, unknown>[], kind: string) => part.find((x) => x.kind === kind)!;

/** The mutations, named for the report. Each answers the body to send. */
export const IMPORT_MUTATIONS: Record<string, Mutation> = {
  'broken line': (r, _w, part) => {
    const lines = part.map((x) => JSON.stringify(x));
    const i = int(r, lines.length);
    lines[i] = lines[i]!.slice(0, 1 + int(r, lines[i]!.length - 1));
    return lines.join('\n');
  },
  'wrong type': (r, _w, part) => {
    const row = anyRow(r, part);
    const k = pick(r, Object.keys(row));
    row[k] = pick(r, WRONG);
    return ndjson(part);
  },
  'missing or extra field': (r, _w, part) => {
    const row = anyRow(r, part);
    if (r() < 0.5) delete row[pick(r, Object.keys(row))];
    else
      row[pick(r, ['id', 'team_id', 'author_user_id', 'imported_author', '__proto__', 'constructor'])] = pick(r, WRONG);
    return ndjson(part);
  },
  'huge field': (r, _w, part) => {
    const o = rowOf(part, 'observation');
    const which = int(r, 6);
    if (which === 0) o.narrative = 'n'.repeat(100_001);
    else if (which === 1) o.facts = Array.from({ length: 201 }, (_, i) => `f${i}`);
    else if (which === 2) o.files_modified = ['x'.repeat(4_001)];
    else if (which === 3) rowOf(part, 'session').session_key = 's'.repeat(201);
    else if (which === 4)
      o.title = 't'.repeat(2_000); // at the limit: accepted
    else o.narrative = '😀'.repeat(40_000); // 160 kB of 4-byte characters: accepted
    return ndjson(part);
  },
  'body too large or too many lines': (r, w, part) => {
    if (r() < 0.5)
      return `${ndjson(part)}\n${JSON.stringify({ ...rowOf(part, 'prompt'), text: 'p'.repeat(1_000_001) })}`;
    const s = rowOf(part, 'session');
    return ndjson([
      ...part,
      ...Array.from({ length: 250 }, (_, i) => observation(String(s.session_key), w.a.user, `many ${i}`, fresh('fh'))),
    ]);
  },
  'reserved project key': (r, w, part) => {
    const key = pick(r, [
      `local/${w.mia.user}/x`,
      `local/${w.a.user}/x`,
      `local/${w.b.user}/x`,
      `github.com/a/x#${w.mia.user}`,
      `${w.mia.privateKey}`,
      'local/',
      'local/x',
      '#',
      `${w.aProject}#${w.mia.user}`,
    ]);
    rowOf(part, 'project').key = key;
    rowOf(part, 'session').project = key;
    if (r() < 0.5) rowOf(part, 'project').visibility = 'private';
    return ndjson(part);
  },
  'reserved session key': (r, w, part) => {
    const key = pick(r, [
      'manual:1:1',
      `manual:1:${w.mia.userId}`,
      'manual:',
      w.mia.session,
      w.aSession,
      'manual:999999:1',
    ]);
    for (const x of part) if ('session_key' in x) x.session_key = key;
    return ndjson(part);
  },
  "another team's or teammate's names": (r, w, part) => {
    const which = int(r, 6);
    const authors = (handle: string) => {
      for (const x of part) if ('author' in x) x.author = handle;
    };
    if (which === 0) authors(w.mia.user);
    else if (which === 1) authors(w.b.user);
    else if (which === 2) {
      rowOf(part, 'project').key = w.b.project;
      rowOf(part, 'session').project = w.b.project;
    } else if (which === 3) {
      for (const x of part) if ('session_key' in x) x.session_key = w.b.session;
    } else if (which === 4) {
      rowOf(part, 'project').owner = w.mia.user;
      rowOf(part, 'project').visibility = 'private';
    } else {
      rowOf(part, 'session').user = w.mia.user;
      rowOf(part, 'observation').source = 'remember';
      rowOf(part, 'observation').author = w.mia.user;
    }
    return ndjson(part);
  },
  'duplicate keys': (r, _w, part) => {
    const which = int(r, 4);
    const lines = part.map((x) => JSON.stringify(x));
    if (which === 0) {
      // The same property twice in one line: JSON.parse keeps the last.
      const i = part.findIndex((x) => x.kind === 'observation');
      lines[i] = lines[i]!.replace('{"kind":"observation"', '{"kind":"observation","kind":"user"');
    } else if (which === 1) {
      // The same session declared twice, in two projects.
      const s = rowOf(part, 'session');
      lines.splice(
        3,
        0,
        JSON.stringify(project('github.com/a/other')),
        JSON.stringify({ ...s, project: 'github.com/a/other' }),
      );
    } else if (which === 2) {
      // The same content hash twice, with different text.
      const o = part.filter((x) => x.kind === 'observation');
      o[1]!.content_hash = o[0]!.content_hash;
      return ndjson(part);
    } else {
      // A summary's hash on an observation.
      rowOf(part, 'observation').content_hash = rowOf(part, 'summary').content_hash;
      return ndjson(part);
    }
    return lines.join('\n');
  },
  'original hash, new text': (r, w, part) => {
    const o = rowOf(part, 'observation');
    o.session_key = w.aSession;
    o.content_hash = pick(r, w.aHashes);
    o.title = 'overwritten?';
    o.narrative = 'overwritten?';
    part.splice(part.indexOf(rowOf(part, 'session')), 1);
    return ndjson(part.filter((x) => x.kind !== 'prompt' && x.kind !== 'summary'));
  },
  unicode: (r, _w, part) => {
    const row = anyRow(r, part);
    const strings = Object.keys(row).filter((k) => typeof row[k] === 'string' && k !== 'kind');
    const k = strings.length ? pick(r, strings) : 'title';
    const u = pick(r, UNICODE);
    row[k] = r() < 0.5 ? u : `${String(row[k] ?? '')}${u.repeat(1 + int(r, 50))}`;
    return ndjson(part);
  },
  'line endings and BOM': (r, _w, part) => {
    const lines = part.map((x) => JSON.stringify(x));
    return pick(r, [
      `\uFEFF${lines.join('\n')}`,
      lines.join('\r\n'),
      lines.join('\n\n\n'),
      `${lines.join('\n')}\n`,
      lines.join('\r'),
      lines.join('\u2028'),
    ]);
  },
  'not UTF-8 or not JSON lines': (r, _w, part) => {
    const text = ndjson(part);
    const which = int(r, 5);
    if (which === 0) {
      const bytes = new TextEncoder().encode(text);
      bytes[int(r, bytes.length)] = 0xff;
      return bytes;
    }
    return pick(r, ['', '\n\n', '[]', JSON.stringify(part), 'null\n1\n"x"', `${text}\n{"kind":"nope"}`]);
  },
  'numbers at the edges': (r, _w, part) => {
    const row = rowOf(part, pick(r, ['prompt', 'observation', 'summary', 'session']));
    const k = pick(r, ['prompt_number', 'created_at', 'started_at', 'ended_at', 'discovery_tokens', 'prompt_count']);
    row[k] = pick(r, [-1, 0, 2 ** 31, 2 ** 53 - 1, 8_640_000_000_000_001, 1.5, 1e21]);
    return ndjson(part);
  },
};

/** One import case: the body, its answer, and (for a refusal) the same body again must answer the same code. */
async function importCase(r: Rng, w: World, failures: Failure[]): Promise<void> {
  const name = pick(r, Object.keys(IMPORT_MUTATIONS));
  const body = IMPORT_MUTATIONS[name]!(r, w, basePart(w));
  const res = await importReq(w.a.token, body);
  const text = await res.text();
  const what = `import: ${name}`;
  if (res.status >= 500) return void failures.push({ what, status: res.status, detail: text.slice(0, 300) });
  if (res.status !== 200) {
    const code = codeOf(text);
    if (res.status < 400 || !code || !CODE.test(code))
      return void failures.push({ what, status: res.status, detail: `no stable code: ${text.slice(0, 200)}` });
    const again = await importReq(w.a.token, body);
    const code2 = codeOf(await again.text());
    if (again.status !== res.status || code2 !== code)
      failures.push({
        what,
        status: again.status,
        detail: `first ${res.status} ${code}, then ${again.status} ${code2}`,
      });
    return;
  }
  // Accepted: the same part again adds nothing (rows are matched by key and hash).
  const again = await importReq(w.a.token, body);
  const second = (await again.json()) as { imported?: Record<string, number> };
  const added = Object.entries(second.imported ?? {}).filter(([k, n]) => k !== 'users' && n > 0);
  if (again.status !== 200 || added.length)
    failures.push({
      what,
      status: again.status,
      detail: `the same part again added ${JSON.stringify(second)}: ${JSON.stringify(String(body).slice(0, 400))}`,
    });
}

function codeOf(text: string): string | null {
  try {
    return ((JSON.parse(text) as { error?: { code?: unknown } }).error?.code as string) ?? null;
  } catch {
    return null;
  }
}

export async function importRounds(r: Rng, w: World, n: number, failures: Failure[]): Promise<void> {
  for (let i = 0; i < n; i++) await importCase(r, w, failures);
}

// --- export parameters --------------------------------------------------------------------------------------

const EXPORT_KEYS = ['project', 'cursor', 'limit', 'after', 'since', 'format', 'all', 'team'];
const EXPORT_VALUES = [
  '',
  ' ',
  '-1',
  '0',
  '1',
  '1e309',
  'NaN',
  'x'.repeat(5_000),
  '%00',
  '😀',
  'local/x',
  'null',
  '{"at":"project","after":-1}',
  'eyJhdCI6ImRvbmUifQ',
  '../',
  '#',
];

export async function exportRounds(r: Rng, w: World, n: number, failures: Failure[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const q = new URLSearchParams();
    for (let k = 1 + int(r, 3); k > 0; k--)
      q.append(
        pick(r, EXPORT_KEYS),
        pick(r, [...EXPORT_VALUES, w.b.project, w.mia.privateKey, w.aProject, `local/${w.mia.user}/diary`]),
      );
    const path = `/api/admin/export?${q}`;
    const res = await call(path, { token: pick(r, [w.a.token, w.a.token, w.mia.token]) });
    const text = await res.text();
    if (res.status >= 500) {
      failures.push({ what: `export ${path.slice(0, 200)}`, status: res.status, detail: text.slice(0, 300) });
      continue;
    }
    if (res.status !== 200) {
      const code = codeOf(text);
      if (!code || !CODE.test(code))
        failures.push({
          what: `export ${path.slice(0, 200)}`,
          status: res.status,
          detail: `no stable code: ${text.slice(0, 200)}`,
        });
      continue;
    }
    // Every line a record; nothing of team B, nothing of mia's private project.
    for (const line of text.split('\n').filter(Boolean)) {
      if (!ExportRecord.safeParse(JSON.parse(line)).success)
        failures.push({ what: `export ${path.slice(0, 200)}`, detail: `not a record: ${line.slice(0, 200)}` });
    }
    if (text.includes(`B fixed ${w.b.word}`))
      failures.push({ what: `export ${path.slice(0, 200)}`, detail: "team B's rows in team A's export" });
    if (text.includes(w.mia.word))
      failures.push({ what: `export ${path.slice(0, 200)}`, detail: "mia's private rows in the admin's export" });
  }
}

// --- move requests ------------------------------------------------------------------------------------------

const BAD_SLUGS = ['', '%20', '..', '%2F..%2F', 'x'.repeat(300), '😀', 'a b', '-x', 'null', '%00', 'team%0Aname'];
const SHARD_VALUES: unknown[] = [
  'DB_9',
  'db_1',
  'DB_01',
  'DB_0',
  '',
  ' ',
  null,
  5,
  ['DB_1'],
  { s: 'DB_1' },
  'DB_1 ',
  'x'.repeat(30),
  'DB;DROP',
];

/**
 * Move requests that must be refused (bad slugs, unknown teams, bad bodies, no operator secret) and the moves
 * that must be harmless: to the team's own database (nothing moves), two at once (one job), and a real move
 * with ingest, import and remember sent between its steps (each answered 2xx or 503 team_moving, and every
 * write answered 2xx is there afterwards). Answers the database team A is on at the end.
 */
export async function moveRounds(
  r: Rng,
  w: World,
  n: number,
  failures: Failure[],
  where: { shard: 'DB' | 'DB_1' },
): Promise<void> {
  const slug = w.a.team;
  for (let i = 0; i < n; i++) {
    const s = r() < 0.5 ? pick(r, BAD_SLUGS) : slug;
    const body =
      r() < 0.2
        ? pick(r, ['{', '[]', 'null', '"DB_1"', '{"shard":"DB_1","force":"yes"}', '{"shard":"DB_1","extra":1}'])
        : JSON.stringify({ shard: pick(r, SHARD_VALUES), force: pick(r, [undefined, true, 'x', 1]) });
    const token = pick(r, [ADMIN_SECRET, ADMIN_SECRET, w.a.token, undefined, 'cairn_x']);
    const res = await call(`/api/admin/teams/${s}/move`, {
      token,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    const text = await res.text();
    const what = `move ${s.slice(0, 40)} ${body.slice(0, 60)} ${token === ADMIN_SECRET ? 'operator' : 'not operator'}`;
    if (res.status >= 500) failures.push({ what, status: res.status, detail: text.slice(0, 300) });
    else if (res.status === 202) failures.push({ what, status: 202, detail: 'a bad move request was taken' });
    else if (!CODE.test(codeOf(text) ?? ''))
      failures.push({ what, status: res.status, detail: `no stable code: ${text.slice(0, 200)}` });
  }

  // To its own database: a job that moves nothing.
  const self = await call(`/api/admin/teams/${slug}/move`, { token: ADMIN_SECRET, json: { shard: where.shard } });
  if (self.status !== 202)
    failures.push({ what: 'move to its own database', status: self.status, detail: await self.text() });
  else {
    const { job } = (await self.json()) as { job: { id: string } };
    const done = await finishJob(w.a.teamId, job.id);
    if (done.status !== 'done' || (done.result as { moved?: boolean }).moved !== false)
      failures.push({ what: 'move to its own database', detail: JSON.stringify(done) });
  }

  // A real move, started twice at once (one job), with writes sent between its steps.
  const to = where.shard === 'DB' ? 'DB_1' : 'DB';
  const [j1, j2] = await Promise.all(
    [0, 1].map(() => startJob(env, moveJob, w.a.teamId, { to, force: r() < 0.5, settleMs: 0 })),
  );
  if (j1!.id !== j2!.id) failures.push({ what: 'two moves at once', detail: `two jobs ${j1!.id} ${j2!.id}` });
  const stored: { kind: 'import' | 'ingest' | 'remember'; mark: string }[] = [];
  const sid = fresh('mv');
  for (let step = 0; step < 8; step++) {
    await runDurableObjectAlarm(lane(w.a.teamId));
    const mark = `mark${fresh('m').replace(/[^a-z0-9]/g, '')}`;
    const which = int(r, 3);
    const res =
      which === 0
        ? await importReq(
            w.a.token,
            ndjson([
              project(w.aProject),
              session(w.aSession, w.aProject, w.a.user),
              observation(w.aSession, w.a.user, mark, mark),
            ]),
          )
        : which === 1
          ? await call(`/api/sessions/${step === 0 ? 'init' : 'observations'}`, {
              token: w.a.token,
              json: step === 0 ? initEvent(sid, mark) : toolEvent(sid, `echo ${mark}`),
            })
          : await call('/mcp', {
              token: w.a.token,
              method: 'POST',
              headers: { accept: 'application/json, text/event-stream' },
              json: {
                jsonrpc: '2.0',
                id: 1,
                method: 'tools/call',
                params: { name: 'remember', arguments: { project: w.aProject, text: `Remember ${mark}.` } },
              },
            });
    const text = await res.text();
    const kind = (['import', 'ingest', 'remember'] as const)[which]!;
    if (res.status >= 500 && !(res.status === 503 && codeOf(text) === 'team_moving'))
      failures.push({ what: `${kind} during a move`, status: res.status, detail: text.slice(0, 300) });
    else if (res.status === 503 && res.headers.get('retry-after') === null)
      failures.push({ what: `${kind} during a move`, detail: '503 without Retry-After' });
    else if (
      kind === 'remember'
        ? res.status === 200 && !text.includes('team_moving') && !text.includes('isError":true')
        : res.status < 300
    ) {
      if (kind !== 'ingest') stored.push({ kind, mark });
    }
  }
  const done = await finishJob(w.a.teamId, j1!.id);
  if (done.status !== 'done') failures.push({ what: 'the move', detail: JSON.stringify(done.error) });
  else where.shard = to;
  const d = env[where.shard];
  for (const s of stored) {
    const n = await d
      .prepare('SELECT COUNT(*) AS n FROM observations WHERE team_id = ?1 AND (title LIKE ?2 OR narrative LIKE ?2)')
      .bind(w.a.teamId, `%${s.mark}%`)
      .first<{ n: number }>();
    if (!n!.n)
      failures.push({
        what: `${s.kind} answered ok during the move`,
        detail: `"${s.mark}" is not on ${where.shard} afterwards`,
      });
  }
}
