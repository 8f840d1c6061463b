// Recall API: context index, file context, prompt context, timeline, full records, project list.
import { Hono } from 'hono';
import { CAPTURE_HEADER } from '#shared/capture';
import { settingsFor } from '../db/team-settings';
import { viewerOf } from '../db/visibility';
import type { AppEnv } from '../auth/types';
import { jsonBody, query } from '../lib/validate';
import type { WireContextAnswer } from '#shared/wire/checkout';
import { recallMode, modeIdFor } from './mode';
import {
  ContextBody,
  ContextQuery,
  DEFAULT_DEPTH,
  FileContextQuery,
  PromptContextQuery,
  SessionContextQuery,
  TimelineQuery,
} from './params';
import { listProjects } from './records';
import { renderTimeline, type TimelineResult } from './render-timeline';
import {
  contextAnswer,
  contextText,
  fileContextText,
  observationRecords,
  parseIds,
  promptContextText,
  sessionSoFar,
  timelineFor,
} from './service';
import { wireEvidence } from '../evidence/checkout';
import { directoryDb, teamDb } from '../db/shards';

// Each router is mounted at its prefix (scope `read`, declared in src/app.ts).
/** /api/context: the session-start index, file context and prompt context. */
export const contextRoutes = new Hono<AppEnv>();
/** /api/timeline */
export const timelineRoutes = new Hono<AppEnv>();
/** /api/observations */
export const observationRoutes = new Hono<AppEnv>();
/** /api/projects */
export const projectRoutes = new Hono<AppEnv>();

contextRoutes.get('/', query(ContextQuery, { lists: ['project'] }), async (c) => {
  const q = c.req.valid('query');
  const { text, capture } = await contextAnswer(c.env, c.get('auth'), {
    projects: q.project,
    observations: q.observations,
    sessions: q.sessions,
    full: q.full,
    timeZone: q.tz,
    now: Date.now(),
    session: q.session,
    git:
      q.branch || q.head || q.history.length
        ? { branch: q.branch ?? null, head: q.head ?? null, trunk: q.trunk ?? null, history: q.history }
        : null,
  });
  // The checkout's capture mode (issue 38): the hooks client keeps it and records nothing while it is `off`.
  c.header(CAPTURE_HEADER, capture);
  return c.text(text);
});

/** A report's largest body: every entry at its longest, with room for the rest of the request. */
const CONTEXT_BODY_BYTES = 400_000;

/**
 * The index with the checkout report (docs/contracts.md, Recall): answers the index and what the server now holds
 * of the device's checkout and wants reported next time (src/shared/wire/checkout.ts).
 */
contextRoutes.post('/', jsonBody(ContextBody, CONTEXT_BODY_BYTES), async (c) => {
  const b = c.req.valid('json');
  const git = b.git
    ? {
        branch: b.git.branch ?? null,
        head: b.git.head ?? null,
        trunk: b.git.trunk ?? null,
        history: b.git.history ?? [],
      }
    : null;
  const r = await contextAnswer(c.env, c.get('auth'), {
    projects: b.project,
    observations: b.observations,
    sessions: b.sessions,
    full: b.full,
    timeZone: b.tz,
    now: Date.now(),
    git: git && (git.branch || git.head || git.history.length) ? git : null,
    checkout: b.checkout,
    session: b.session,
  });
  const answer: WireContextAnswer = {
    text: r.text,
    checkout: r.exchange?.checkout ?? { digest: null, need: false, unreported: 0 },
    watch: r.exchange ? r.exchange.watch : { files: [], branches: [] },
    watch_digest: r.exchange?.watchDigest ?? '',
  };
  c.header(CAPTURE_HEADER, r.capture);
  return c.json(answer);
});

contextRoutes.get('/file', query(FileContextQuery, { lists: ['project', 'path'] }), async (c) => {
  const q = c.req.valid('query');
  const text = await fileContextText(c.env, c.get('auth'), {
    projects: q.project,
    paths: q.path,
    cwd: q.cwd,
    mtime: q.mtime,
    blob: q.blob,
    ws: q.ws,
    timeZone: q.tz,
    now: Date.now(),
    session: q.session,
  });
  return c.text(text);
});

contextRoutes.get('/prompt', query(PromptContextQuery, { lists: ['project'] }), async (c) => {
  const q = c.req.valid('query');
  return c.text(
    await promptContextText(c.env, c.get('auth'), {
      projects: q.project,
      q: q.q,
      timeZone: q.tz,
      session: q.session,
      now: Date.now(),
    }),
  );
});

/**
 * This session so far (the block injected after a compaction; the status line's count): `format=text` answers
 * the block alone, JSON its counts with it. A session not stored yet answers zeros, never 404.
 */
contextRoutes.get('/session', query(SessionContextQuery), async (c) => {
  const q = c.req.valid('query');
  const r = await sessionSoFar(c.env, c.get('auth'), {
    key: q.session,
    timeZone: q.tz,
    maxChars: q.max_chars ?? 4_000,
  });
  return q.format === 'text' ? c.text(r.text) : c.json(r);
});

/** JSON form of a timeline: times as ISO strings, summaries as `S<id>` so ids never collide. */
export function timelineJson(r: TimelineResult) {
  return {
    anchor: {
      kind: r.anchor.kind,
      id: r.anchor.id === null ? null : r.anchor.kind === 'summary' ? `S${r.anchor.id}` : r.anchor.id,
      time: new Date(r.anchor.at).toISOString(),
    },
    before: r.before,
    after: r.after,
    items: r.items.map((i) =>
      i.kind === 'observation'
        ? {
            kind: i.kind,
            id: i.id,
            time: new Date(i.at).toISOString(),
            type: i.type,
            title: i.title,
            project: i.project,
            author: i.author,
            tokens: i.tokens,
            anchor: i.anchor,
            evidence: wireEvidence(i.evidence),
          }
        : {
            kind: i.kind,
            id: `S${i.id}`,
            time: new Date(i.at).toISOString(),
            request: i.request,
            project: i.project,
            author: i.author,
            anchor: i.anchor,
          },
    ),
  };
}

timelineRoutes.get('/', query(TimelineQuery, { lists: ['project'] }), async (c) => {
  const q = c.req.valid('query');
  const auth = c.get('auth');
  const { result, mode } = await timelineFor(c.env, auth, {
    anchor: q.anchor,
    q: q.q,
    before: q.before ?? DEFAULT_DEPTH,
    after: q.after ?? DEFAULT_DEPTH,
    projects: q.project,
  });
  if (q.format === 'text') return c.text(renderTimeline({ result, mode, viewer: auth.handle, timeZone: q.tz }));
  return c.json(timelineJson(result));
});

observationRoutes.get('/', async (c) => {
  const ids = parseIds(c.req.query('ids'));
  const { records } = await observationRecords(c.env, c.get('auth'), ids);
  return c.json({ observations: records });
});

projectRoutes.get('/', async (c) => {
  const auth = c.get('auth');
  const settings = await settingsFor(directoryDb(c.env), auth);
  const projects = await listProjects(await teamDb(c.env, auth.teamId), viewerOf(auth, settings));
  return c.json({ projects, mode: recallMode(modeIdFor(c.env, settings)).id });
});
