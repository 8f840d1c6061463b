// Admin API, projects: list, rename (old key stays an alias), merge (rows move in one batch, alias left
// behind), and visibility. Only projects the caller may see are found; others answer as "no such project".
import { Hono } from 'hono';
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import { findVisibleProject as findProject, listVisibleProjects, type ProjectRef } from '../db/projects';
import { isReservedProjectKey } from '../db/write-policy';
import type { AppEnv } from '../auth/types';
import { AppError, notFound } from '../lib/errors';
import { jsonBody } from '../lib/validate';
import { keyOwner, mergeProjects, renameProject, rowsOfProject, setProjectVisibility } from '../db/project-admin';
import { teamDb } from '../db/shards';
import { movingRefusal, writableTeamDb } from '../slots/enter-write';

const SMALL_BODY = 10_000;

export const ProjectKey = z
  .string()
  .trim()
  .min(1)
  .max(300)
  .regex(
    /^[^\s\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+$/,
    'no spaces, control or bidi characters',
  );

export const RenameBody = z.object({ from: ProjectKey, to: ProjectKey }).strict();
export type RenameBody = z.infer<typeof RenameBody>;
export const MergeBody = z.object({ from: ProjectKey, into: ProjectKey }).strict();
export type MergeBody = z.infer<typeof MergeBody>;
export const VisibilityBody = z.object({ key: ProjectKey, visibility: z.enum(['team', 'private']) }).strict();
export type VisibilityBody = z.infer<typeof VisibilityBody>;

type ProjectRow = ProjectRef;

/** A visible project by its stored key, an alias, or the caller's own `local/<folder>` shorthand. */
export const findVisibleProject = (db: D1Database, auth: AuthContext, key: string) => findProject(db, auth, key);

async function mustFind(db: D1Database, auth: AuthContext, key: string): Promise<ProjectRow> {
  const p = await findVisibleProject(db, auth, key);
  if (!p) throw notFound('project');
  return p;
}

/** `local/…` and `#` keys are made by the server only (see isReservedProjectKey). */
function refuseReserved(key: string): void {
  if (isReservedProjectKey(key)) {
    throw new AppError(
      400,
      'reserved_project_key',
      'Keys starting with "local/" or holding "#" are made by the server; pick another key.',
    );
  }
}

const keyUnavailable = () =>
  new AppError(
    409,
    'project_key_unavailable',
    'That key cannot be used for this project; pick another (to join two projects you both see, merge them).',
  );

export const adminProjectRoutes = new Hono<AppEnv>()
  .get('/projects', async (c) => {
    const auth = c.get('auth');
    return c.json({ projects: await listVisibleProjects(await teamDb(c.env, auth.teamId), auth) });
  })

  .post('/projects/rename', jsonBody(RenameBody, SMALL_BODY), async (c) => {
    const auth = c.get('auth');
    const body = c.req.valid('json');
    const db = await writableTeamDb(c.env, auth.teamId);
    refuseReserved(body.to);
    if (body.from.includes('#')) refuseReserved(body.from);
    const p = await mustFind(db, auth, body.from);
    if (body.to === p.key) return c.json({ project: { key: p.key, previous: p.key } });
    const taken = await keyOwner(db, auth.teamId, body.to);
    // One answer whether the key names a project the caller sees or someone's private one it must not reveal.
    if (taken !== null && taken !== p.id) throw keyUnavailable();
    const now = Date.now();
    await renameProject(db, auth.teamId, p, body.to, now, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'project.rename',
      target: `project:${body.to}`,
      detail: { from: p.key, to: body.to },
      at: now,
    }).catch((err: unknown) => {
      // While a move copies the team its project keys stay as they are (D1 refuses the change): 503 team_moving.
      throw movingRefusal(err, now);
    });
    return c.json({ project: { key: body.to, previous: p.key } });
  })

  .post('/projects/merge', jsonBody(MergeBody, SMALL_BODY), async (c) => {
    const auth = c.get('auth');
    const body = c.req.valid('json');
    const db = await writableTeamDb(c.env, auth.teamId);
    refuseReserved(body.into);
    if (body.from.includes('#')) refuseReserved(body.from);
    const from = await mustFind(db, auth, body.from);
    const into = await mustFind(db, auth, body.into);
    if (isReservedProjectKey(into.key)) refuseReserved(into.key);
    if (from.id === into.id) throw new AppError(400, 'same_project', 'Both keys name the same project.');
    const now = Date.now();
    const moved = await rowsOfProject(db, auth.teamId, from.id);
    await mergeProjects(db, auth.teamId, from, into, now, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'project.merge',
      target: `project:${into.key}`,
      detail: { from: from.key, into: into.key, moved },
      at: now,
    });
    return c.json({ project: { key: into.key, merged: from.key }, moved });
  })

  .post('/projects/visibility', jsonBody(VisibilityBody, SMALL_BODY), async (c) => {
    const auth = c.get('auth');
    const body = c.req.valid('json');
    const db = await writableTeamDb(c.env, auth.teamId);
    const p = await mustFind(db, auth, body.key);
    // A shadow project holds what its owner wrote under someone else's private key: it stays private.
    if (p.key.includes('#')) refuseReserved(p.key);
    const now = Date.now();
    // Making a team project private gives it to whoever asked, so it never vanishes from the actor's view
    // into someone else's hands; making it team-visible keeps its owner.
    const owner = body.visibility === 'private' && p.visibility === 'team' ? auth.userId : p.ownerUserId;
    await setProjectVisibility(db, p.id, body.visibility, owner, {
      teamId: auth.teamId,
      actorUserId: auth.userId,
      action: 'project.visibility',
      target: `project:${p.key}`,
      detail: { from: p.visibility, to: body.visibility },
      at: now,
    });
    return c.json({ project: { key: p.key, visibility: body.visibility } });
  });
