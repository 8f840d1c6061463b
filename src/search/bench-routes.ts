// Local-only benchmark helpers (CAIRN_LOCAL=1, admin scope): bulk-seed observations and a baseline query.
import { configOf } from '../config';
import { Hono } from 'hono';
import { z } from 'zod';
import { ensureProject } from '../db/projects';
import type { AppEnv } from '../auth/types';
import { cjkTerms } from '../lib/cjk';
import { notFound } from '../lib/errors';
import { jsonBody } from '../lib/validate';

/** Mounted at /api/admin/bench, under the admin guard (src/app.ts). */
export const benchRoutes = new Hono<AppEnv>();

// Outside local runs these routes do not exist at all.
benchRoutes.use('*', async (c, next) => {
  if (!configOf(c.env).local) throw notFound('route');
  await next();
});

const SeedObservation = z.object({
  type: z.string().min(1).max(40),
  title: z.string().max(500),
  subtitle: z.string().max(500).nullable().optional(),
  narrative: z.string().max(5000),
  facts: z.array(z.string().max(500)).max(20).default([]),
  concepts: z.array(z.string().max(60)).max(10).default([]),
  files_read: z.array(z.string().max(300)).max(20).default([]),
  files_modified: z.array(z.string().max(300)).max(20).default([]),
  created_at: z.number().int().positive(),
});
export type SeedObservation = z.infer<typeof SeedObservation>;

export const SeedBody = z.object({
  project: z.string().min(1).max(200),
  session: z.string().min(1).max(200),
  observations: z.array(SeedObservation).min(1).max(1000),
});
export type SeedBody = z.infer<typeof SeedBody>;

/** Inserts observations (and their file rows) as the caller, in one D1 batch (≤ 1000); returns their ids in order. */
benchRoutes.post('/seed', jsonBody(SeedBody, 5_000_000), async (c) => {
  const auth = c.get('auth');
  const body = c.req.valid('json');
  const now = Date.now();
  const project = await ensureProject(c.env.DB, auth, body.project, now);
  const session = await c.env.DB.prepare(
    `INSERT INTO sessions (team_id, session_key, project_id, user_id, device_id, started_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(team_id, session_key) DO UPDATE SET prompt_count = prompt_count RETURNING id`,
  )
    .bind(auth.teamId, body.session, project.id, auth.userId, auth.deviceId, now)
    .first<{ id: number }>();
  const insert = c.env.DB.prepare(
    `INSERT INTO observations (team_id, project_id, session_id, type, title, subtitle, facts, narrative, concepts, files_read,
        files_modified, cjk_terms, created_at, stored_at, content_hash, author_user_id, device_id, source)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'bench') RETURNING id`,
  );
  const stamp = `${now.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const rows = await c.env.DB.batch<{ id: number }>(
    body.observations.map((o, i) =>
      insert.bind(
        auth.teamId, project.id, session!.id, o.type, o.title, o.subtitle ?? null, JSON.stringify(o.facts), o.narrative, JSON.stringify(o.concepts),
        JSON.stringify(o.files_read), JSON.stringify(o.files_modified), cjkTerms(o.title, o.subtitle, o.narrative, ...o.facts), o.created_at, now,
        `${stamp}-${i}`, auth.userId, auth.deviceId,
      ),
    ),
  );
  const ids = rows.map((r) => r.results[0]!.id);
  const fileStmt = c.env.DB.prepare('INSERT OR IGNORE INTO observation_files (observation_id, team_id, project_id, path, kind) VALUES (?, ?, ?, ?, ?)');
  const files = body.observations.flatMap((o, i) => [
    ...o.files_read.map((p) => fileStmt.bind(ids[i]!, auth.teamId, project.id, p, 'read')),
    ...o.files_modified.map((p) => fileStmt.bind(ids[i]!, auth.teamId, project.id, p, 'modified')),
  ]);
  if (files.length) await c.env.DB.batch(files);
  return c.json({ project: project.key, ids }, 201);
});

/** The floor every recall route is compared with: one indexed query for the newest 50 rows of a project. */
benchRoutes.get('/baseline', async (c) => {
  const auth = c.get('auth');
  const key = c.req.query('project') ?? '';
  const project = await c.env.DB.prepare('SELECT id FROM projects WHERE team_id = ? AND key = ?').bind(auth.teamId, key).first<{ id: number }>();
  if (!project) throw notFound('project');
  const { results } = await c.env.DB.prepare(
    'SELECT id, type, title, created_at FROM observations WHERE team_id = ? AND project_id = ? ORDER BY created_at DESC LIMIT 50',
  )
    .bind(auth.teamId, project.id)
    .all();
  return c.json({ rows: results.length });
});
