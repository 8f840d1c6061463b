// Local-only benchmark helpers (CAIRN_LOCAL=1, admin scope): bulk-seed observations and a baseline query.
import { configOf } from '../config';
import { Hono } from 'hono';
import * as z from 'zod';
import { runBatch } from '../db/batch';
import { databaseSize, newestOfProjectKey } from './queries';
import { db } from '../db/client';
import { insertObservation, insertObservationFiles } from '../db/observations';
import { ensureProject } from '../db/projects';
import { upsertSession } from '../db/sessions';
import type { AppEnv } from '../auth/types';
import { notFound } from '../lib/errors';
import { jsonBody } from '../lib/validate';
import { sessionStub } from '../session/session-do';
import { teamDb } from '../db/shards';

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
  /** Evidence ids by path (bench/evidence-cost.bench.mjs): stored on the file rows as a tool event's would be. */
  file_ids: z
    .record(z.string().max(300), z.object({ blob: z.string().max(64), ws: z.string().max(16).nullish() }))
    .optional(),
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
  const d = db(await teamDb(c.env, auth.teamId));
  const project = await ensureProject(d, auth, body.project, now);
  const { id: sessionId } = await upsertSession(d, {
    teamId: auth.teamId,
    sessionKey: body.session,
    projectId: project.id,
    userId: auth.userId,
    deviceId: auth.deviceId,
    platform: 'claude-code',
    startedAt: now,
  });
  const stamp = `${now.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const place = {
    teamId: auth.teamId,
    projectId: project.id,
    sessionId,
    authorUserId: auth.userId,
    deviceId: auth.deviceId,
    source: 'bench',
    storedAt: now,
  };
  const rows = (await runBatch(
    d,
    body.observations.map((o, i) =>
      insertObservation(
        d,
        { ...place, createdAt: o.created_at, contentHash: `${stamp}-${i}` },
        {
          type: o.type,
          title: o.title,
          subtitle: o.subtitle ?? null,
          facts: o.facts,
          narrative: o.narrative,
          concepts: o.concepts,
          filesRead: o.files_read,
          filesModified: o.files_modified,
        },
      ),
    ),
  )) as { id: number }[][];
  const ids = rows.map((r) => r[0]!.id);
  await runBatch(
    d,
    body.observations.flatMap((o, i) => {
      const ids = (path: string) =>
        o.file_ids?.[path] ? { blob: o.file_ids[path].blob, ws: o.file_ids[path].ws ?? null } : {};
      const files = [
        ...o.files_read.map((path) => ({ path, kind: 'read' as const, ...ids(path) })),
        ...o.files_modified.map((path) => ({ path, kind: 'modified' as const, ...ids(path) })),
      ];
      return files.length ? [insertObservationFiles(d, sessionId, `${stamp}-${i}`, files)] : [];
    }),
  );
  return c.json({ project: project.key, ids }, 201);
});

/** The floor every recall route is compared with: one indexed query for the newest 50 rows of a project. */
benchRoutes.get('/baseline', async (c) => {
  const auth = c.get('auth');
  const key = c.req.query('project') ?? '';
  const results = await newestOfProjectKey(db(await teamDb(c.env, auth.teamId)), auth.teamId, key);
  if (!results) throw notFound('project');
  return c.json({ rows: results.length });
});

/** The local database's size in bytes (D1 reports it with every result), for bench/capacity.bench.mjs. */
benchRoutes.get('/size', async (c) => {
  return c.json(await databaseSize(await teamDb(c.env, c.get('auth').teamId)));
});

/** The floor of an ingest request: one round trip to a SessionDO that does nothing (bench/pipeline.bench.mjs). */
benchRoutes.post('/session-ping', async (c) => {
  return c.json({ answer: await sessionStub(c.env, c.get('auth').teamId, 'bench-floor').ping() });
});
