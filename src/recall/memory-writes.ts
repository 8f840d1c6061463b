// Explicit memory edits by an agent: `remember` stores an observation directly (forgetting: src/forget/).
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { tallied, type RedactionTally } from '#shared/redact';
import { redactionAudit, writeAudit } from '../db/audit';
import { db, type Db } from '../db/client';
import { insertObservation, insertObservationFiles, observationIdByHash } from '../db/observations';
import { ensurePersonalProject, ensureProject } from '../db/projects';
import { manualSession as manualSessionOf } from '../db/sessions';
import { assertMayWrite, type ProjectAccess } from '../db/write-policy';
import { settingsFor } from '../db/team-settings';
import type { CairnEnv } from '../env';
import { writableTeamDb } from '../slots/enter-write';
import { lineField } from '../lib/validate';
import { AppError } from '../lib/errors';
import { observationHash } from '../store/hash';
import { normalizePath } from './file-context';
import { oneLine } from './format';
import { modeIdFor, recallMode } from './mode';
import { directoryDb } from '../db/shards';
import { supersedeRows } from '../db/corrections';
import { viewerOf } from '../db/visibility';
import { checkSupersede } from '../corrections/service';

export const RememberInput = z
  .object({
    /** The project the note belongs to; not needed (and ignored) for a personal note. */
    project: lineField(300).optional(),
    /**
     * `personal`: the caller's own memory (a preference, a rule of theirs), kept in their personal project: it reaches
     * their sessions in every project on every device, and nobody else's.
     */
    scope: z.enum(['project', 'personal']).default('project'),
    text: z.string().trim().min(1, 'say what to remember').max(8000, 'at most 8000 characters'),
    title: z.string().trim().max(200).optional(),
    type: z.string().trim().max(60).optional(),
    concepts: z.array(z.string().trim().min(1).max(60)).max(10).optional(),
    facts: z.array(z.string().trim().min(1).max(1000)).max(20).optional(),
    files: z.array(z.string().trim().min(1).max(1024)).max(20).optional(),
    /** Observations this note corrects: each is marked superseded by it (its author or an admin may). */
    supersedes: z
      .array(
        z
          .union([
            z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
            z
              .string()
              .trim()
              .regex(/^#?\d{1,15}$/, 'supersedes: observation ids such as 12'),
          ])
          .transform(Number),
      )
      .max(10)
      .optional(),
  })
  .refine((r) => r.scope === 'personal' || r.project !== undefined, {
    message: 'give the project key (or scope: personal)',
    path: ['project'],
  });
export type RememberInput = z.infer<typeof RememberInput>;

export interface Remembered {
  id: number;
  project: string;
  /** Where it went: the project's memory or the caller's own. */
  scope: 'project' | 'personal';
  duplicate: boolean;
  /** The observations it superseded. */
  superseded: number[];
}

const DEFAULT_TYPE = 'discovery';

/** The note's type and concepts, checked against the team's mode (400 invalid_type / invalid_concept). */
export async function modeFields(env: CairnEnv, auth: AuthContext, wanted: { type?: string; concepts?: string[] }) {
  const settings = await settingsFor(directoryDb(env), auth);
  const mode = recallMode(modeIdFor(env, settings));
  const type = wanted.type || DEFAULT_TYPE;
  if (!mode.types.some((t) => t.id === type)) {
    throw new AppError(400, 'invalid_type', `type must be one of: ${mode.types.map((t) => t.id).join(', ')}.`);
  }
  const concepts = [...new Set(wanted.concepts ?? [])];
  const unknown = concepts.filter((c) => !mode.conceptIds.includes(c));
  if (unknown.length)
    throw new AppError(400, 'invalid_concept', `unknown concept "${unknown[0]}"; use: ${mode.conceptIds.join(', ')}.`);
  return { settings, type, concepts };
}

/** The caller's manual session of the project (made on first use): where remembered and primed notes are filed. */
export const manualSession = (d: Db, auth: AuthContext, projectId: number, now: number): Promise<number> =>
  manualSessionOf(d, auth, projectId, now);

/**
 * Stores what the agent was asked to remember as an observation (source `remember`), deduplicated by content
 * within the user's manual session of that project. Type and concepts must belong to the team's mode.
 */
export async function remember(
  env: CairnEnv,
  auth: AuthContext,
  input: RememberInput,
  now: number,
): Promise<Remembered> {
  const { settings, type, concepts } = await modeFields(env, auth, input);
  // Through the team's write gate: refused (503 team_moving) while the team moves between databases.
  const shard = await writableTeamDb(env, auth.teamId);
  const d = db(shard);
  // Every correction is checked before anything is stored: a refused one stores nothing.
  const supersedes = [...new Set(input.supersedes ?? [])];
  const viewer = viewerOf(auth, settings);
  for (const id of supersedes) await checkSupersede(shard, viewer, auth, id, null);
  // The write policy: readers and, where the team lists a project's writers, everyone else write nothing there (a
  // member's own private projects, their personal memory among them, are theirs to write).
  const allow = (p: ProjectAccess & { key: string }) => assertMayWrite(auth, p, settings.project_writers);
  const project =
    input.scope === 'personal'
      ? await ensurePersonalProject(d, auth, now, allow)
      : await ensureProject(d, auth, input.project ?? '', now, 'team', allow);
  const sessionId = await manualSession(d, auth, project.id, now);
  const title = input.title || oneLine(input.text, 80);
  const narrative = input.text;
  const files = [...new Set((input.files ?? []).map(normalizePath).filter(Boolean))];
  const contentHash = await observationHash(sessionId, { title, narrative });
  const place = {
    teamId: auth.teamId,
    projectId: project.id,
    sessionId,
    promptNumber: 0,
    authorUserId: auth.userId,
    deviceId: auth.deviceId,
    source: 'remember',
    createdAt: now,
    storedAt: now,
    discoveryTokens: 0,
    contentHash,
  };
  const content = {
    type,
    title,
    subtitle: null,
    facts: input.facts ?? [],
    narrative,
    concepts,
    filesRead: files,
    filesModified: [],
  };
  const tally: RedactionTally = {};
  const [inserted] = await insertObservation(d, place, content, tally);
  if (tallied(tally)) await writeAudit(d, redactionAudit(auth.teamId, auth.userId, 'remember', tally, now));
  let id: number;
  if (!inserted) {
    const existing = await observationIdByHash(d, sessionId, contentHash);
    if (existing === undefined) throw new Error('duplicate observation vanished');
    id = existing;
  } else {
    id = inserted.id;
    if (files.length)
      await insertObservationFiles(
        d,
        sessionId,
        contentHash,
        files.map((path) => ({ path, kind: 'read' as const })),
      ).run();
  }
  const superseded = supersedes.filter((old) => old !== id);
  for (const old of superseded) {
    await supersedeRows(d, {
      teamId: auth.teamId,
      id: old,
      by: id,
      actorUserId: auth.userId,
      actor: 'user',
      reason: `corrected by #${id} (remember)`,
      at: now,
    });
  }
  return { id, project: project.key, scope: input.scope, duplicate: !inserted, superseded };
}
