// Priming a project: the first notes of a repository's memory from its docs' headings, recent commits and open
// TODOs (the client extracts them: hooks-client/src/prime/). Stored like `remember` (the one observation insert:
// redacted, held back when instruction-like; the team's write gate; the caller's manual session) with source
// `prime`, which the index and the viewer show. Idempotent across the team: a note's hash is its project and
// text, so priming again, by anyone, stores nothing that is already there — nor a note someone forgot (forget
// leaves that hash as a tombstone, db/forget.ts, deleted with the project).
import { Hono } from 'hono';
import * as z from 'zod';
import type { AppEnv, AuthContext } from '../auth/types';
import { tallied, type RedactionTally } from '#shared/redact';
import { redactionAudit, writeAudit } from '../db/audit';
import { db } from '../db/client';
import { insertObservation, insertObservationFiles, primedHashes } from '../db/observations';
import { tombstonedHashes } from '../db/forget';
import { ensureProject } from '../db/projects';
import { assertMayWrite } from '../db/write-policy';
import { settingsFor } from '../db/team-settings';
import { directoryDb } from '../db/shards';
import type { CairnEnv } from '../env';
import { serverGate, type GateSettings } from '../gate/gate';
import { sha256Hex } from '../lib/crypto';
import { AppError } from '../lib/errors';
import { jsonBody, lineField } from '../lib/validate';
import { writableTeamDb } from '../slots/enter-write';
import { normalizePath } from './file-context';
import { manualSession } from './memory-writes';
import { modeIdFor, recallMode } from './mode';

/** Notes a request: a priming of ~45 notes is a few requests, each a handful of statements. */
export const PRIME_NOTES_PER_REQUEST = 10;
/** A note is headings, a commit's subject and files, or TODO lines: short excerpts, never whole files. */
export const PRIME_TEXT_MAX = 2_000;

export const PrimeKind = z.enum(['docs', 'commit', 'todo']);
export type PrimeKind = z.infer<typeof PrimeKind>;

export const PrimeBody = z.object({
  project: lineField(300),
  notes: z
    .array(
      z.object({
        kind: PrimeKind,
        title: z.string().trim().min(1).max(200),
        text: z.string().trim().min(1).max(PRIME_TEXT_MAX, `at most ${PRIME_TEXT_MAX} characters a note`),
        files: z.array(z.string().trim().min(1).max(1024)).max(20).default([]),
      }),
    )
    .min(1, 'send at least one note')
    .max(PRIME_NOTES_PER_REQUEST, `at most ${PRIME_NOTES_PER_REQUEST} notes a request`),
});
export type PrimeBody = z.infer<typeof PrimeBody>;

/** Each kind's type and concept, when the team's mode has them (concepts it lacks are dropped; the type falls back). */
const KIND_SHAPE: Record<PrimeKind, { type: string; concepts: string[] }> = {
  docs: { type: 'discovery', concepts: ['how-it-works'] },
  commit: { type: 'change', concepts: ['what-changed'] },
  todo: { type: 'discovery', concepts: [] },
};

export interface Primed {
  project: string;
  stored: number[];
  /** Notes the project already holds (primed before, by the caller or a teammate). */
  duplicates: number;
}

type Note = { kind: string; title: string; text: string };

/**
 * A note's content hash: the same note primed by anyone hashes the same. Looked up within the project, so the
 * project is not part of it: a team move or a restore gives the project a new id, and a hash that held the id
 * made every note (and every forgotten note's tombstone) new there.
 */
const primeHash = async (n: Note) => (await sha256Hex(['prime', n.kind, n.title, n.text].join('\u0000'))).slice(0, 16);

/** The hash notes primed before 2026-12-03 were stored under (it held the project's id); still counted as known. */
const legacyPrimeHash = async (projectId: number, n: Note) =>
  (await sha256Hex(['prime', String(projectId), n.kind, n.title, n.text].join('\u0000'))).slice(0, 16);

export async function prime(env: CairnEnv, auth: AuthContext, body: PrimeBody, now: number): Promise<Primed> {
  const settings = await settingsFor(directoryDb(env), auth);
  // A project the team excludes is not recorded by any path (serverGate, as for hook events).
  if (!serverGate(settings as GateSettings, { kind: 'init', project: body.project, cwd: '' }).allow) {
    throw new AppError(403, 'project_excluded', 'This project is excluded from memory by the team settings.');
  }
  const mode = recallMode(modeIdFor(env, settings));
  const shapeOf = (kind: PrimeKind) => {
    const s = KIND_SHAPE[kind];
    return {
      type: mode.types.some((t) => t.id === s.type) ? s.type : (mode.types[0]?.id ?? 'discovery'),
      concepts: s.concepts.filter((c) => mode.conceptIds.includes(c)),
    };
  };
  // Through the team's write gate: refused (503 team_moving) while the team moves between databases.
  const d = db(await writableTeamDb(env, auth.teamId));
  // The write policy: readers and, where the team lists a project's writers, everyone else prime nothing there.
  const project = await ensureProject(d, auth, body.project, now, 'team', (p) =>
    assertMayWrite(auth, p, settings.project_writers),
  );
  const sessionId = await manualSession(d, auth, project.id, now);
  const hashed = await Promise.all(
    body.notes.map(async (n) => ({ n, hash: await primeHash(n), legacy: await legacyPrimeHash(project.id, n) })),
  );
  const hashes = hashed.flatMap((h) => [h.hash, h.legacy]);
  const known = await primedHashes(d, auth.teamId, project.id, hashes);
  // A note someone forgot stays forgotten: its tombstone (a hash, never the text) counts as already there.
  for (const h of await tombstonedHashes(d, auth.teamId, project.id, hashes)) known.add(h);
  const tally: RedactionTally = {};
  const stored: number[] = [];
  const seen = new Set<string>();
  for (const { n, hash, legacy } of hashed) {
    if (known.has(hash) || known.has(legacy) || seen.has(hash)) continue;
    seen.add(hash);
    const files = [...new Set(n.files.map(normalizePath).filter(Boolean))];
    const place = {
      teamId: auth.teamId,
      projectId: project.id,
      sessionId,
      promptNumber: 0,
      authorUserId: auth.userId,
      deviceId: auth.deviceId,
      source: 'prime',
      createdAt: now,
      storedAt: now,
      discoveryTokens: 0,
      contentHash: hash,
    };
    const content = {
      ...shapeOf(n.kind),
      title: n.title,
      subtitle: null,
      facts: [],
      narrative: n.text,
      filesRead: files,
      filesModified: [],
    };
    const [inserted] = await insertObservation(d, place, content, tally);
    if (!inserted) continue;
    stored.push(inserted.id);
    if (files.length)
      await insertObservationFiles(
        d,
        sessionId,
        hash,
        files.map((path) => ({ path, kind: 'read' as const })),
      ).run();
  }
  if (tallied(tally)) await writeAudit(d, redactionAudit(auth.teamId, auth.userId, 'prime', tally, now));
  return { project: project.key, stored, duplicates: body.notes.length - stored.length };
}

/** Mounted at /api/prime (scope `ingest`, declared in src/app.ts). */
export const primeRoutes = new Hono<AppEnv>();

primeRoutes.post('/', jsonBody(PrimeBody, 64_000), async (c) => {
  const done = await prime(c.env, c.get('auth'), c.req.valid('json'), Date.now());
  return c.json(done);
});
