// THE visibility rule: which projects a caller may see, and from it which memory rows they may read. Every
// read of projects, observations, summaries and prompts builds its WHERE from the functions below; nothing
// else in the code base spells the rule out (test/worker/teams/isolation.test.ts proves each read route
// goes through `canSeeProject`).
import { and, eq, inArray, isNull, ne, notInArray, or, type SQL } from 'drizzle-orm';
import { QueryBuilder, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { db } from './client';
import type { Caller } from './caller';
import { observations, projects, prompts, summaries } from './schema';
import { settingsFor, type TeamSettings } from './team-settings';

/** Observation types that only their author may read unless the team sets `share_sensitive: true`. */
export const SENSITIVE_TYPES = ['sensitive'] as const;

/** Who is reading, with the team's sensitive-sharing setting already resolved. */
export interface Viewer {
  teamId: number;
  userId: number;
  shareSensitive: boolean;
}

/** The caller as the project rule needs them. */
export type ProjectViewer = Pick<Viewer, 'teamId' | 'userId'>;

/** The Viewer for settings the caller already loaded. */
export function viewerOf(auth: Pick<Caller, 'teamId' | 'userId'>, settings: TeamSettings): Viewer {
  return { teamId: auth.teamId, userId: auth.userId, shareSensitive: settings.share_sensitive === true };
}

/** Resolves the sensitive-sharing setting (read with the token); pass the Viewer to the builders below. */
export async function loadViewer(d1: D1Database, auth: Pick<Caller, 'teamId' | 'userId' | 'settings'>): Promise<Viewer> {
  return viewerOf(auth, await settingsFor(d1, auth));
}

const qb = new QueryBuilder();

// Parameters take the columns the rule reads, so aliases (`alias(observations, 'o')`) fit as well as tables.
type Cols<K extends string> = Record<K, AnySQLiteColumn>;
type ProjectCols = Cols<'teamId' | 'visibility' | 'ownerUserId'>;
type ObservationCols = Cols<'teamId' | 'projectId' | 'deletedAt' | 'type' | 'authorUserId'>;
type SummaryCols = Cols<'teamId' | 'projectId' | 'deletedAt'>;
type PromptCols = Cols<'teamId' | 'projectId'>;

let ruleUses = 0;
/** How often the rule has been built in this isolate: the isolation suite checks every read route raises it. */
export const visibilityRuleUses = (): number => ruleUses;

/**
 * The rule. A project is visible to a caller when it belongs to their team and is team-visible or theirs.
 * `p` may be an alias of `projects`.
 */
export function canSeeProject(v: ProjectViewer, p: ProjectCols = projects): SQL {
  ruleUses++;
  return and(eq(p.teamId, v.teamId), or(eq(p.visibility, 'team'), eq(p.ownerUserId, v.userId)))!;
}

/** `SELECT id FROM projects WHERE <the rule>`, for `inArray(x.projectId, visibleProjectIds(v))`. */
export const visibleProjectIds = (v: ProjectViewer) => qb.select({ id: projects.id }).from(projects).where(canSeeProject(v));

/**
 * Observations the viewer may read: their team, a visible project, not deleted, and `sensitive` rows only
 * when they wrote them (or the team shares them). `o` may be an alias of `observations`.
 */
export function canReadObservation(v: Viewer, o: ObservationCols = observations): SQL {
  return and(
    eq(o.teamId, v.teamId),
    isNull(o.deletedAt),
    inArray(o.projectId, visibleProjectIds(v)),
    v.shareSensitive ? undefined : or(notInArray(o.type, [...SENSITIVE_TYPES]), eq(o.authorUserId, v.userId)),
  )!;
}

/** Session summaries the viewer may read (team, visible project, not deleted). */
export function canReadSummary(v: Viewer, s: SummaryCols = summaries): SQL {
  return and(eq(s.teamId, v.teamId), isNull(s.deletedAt), inArray(s.projectId, visibleProjectIds(v)))!;
}

/** User prompts the viewer may read (team, visible project). Prompts have no soft delete. */
export function canReadPrompt(v: Viewer, pm: PromptCols = prompts): SQL {
  return and(eq(pm.teamId, v.teamId), inArray(pm.projectId, visibleProjectIds(v)))!;
}

/**
 * The team's projects the caller may not read (other users' private ones), at most `max` + 1 of them: the
 * vector index is told to leave these out (its filters have a size limit, so a caller with more gets none and
 * visibility rests on the D1 re-check alone).
 */
export async function projectsHiddenFrom(d1: D1Database, v: ProjectViewer, max: number): Promise<number[]> {
  const rows = await db(d1)
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.teamId, v.teamId), eq(projects.visibility, 'private'), or(isNull(projects.ownerUserId), ne(projects.ownerUserId, v.userId))))
    .limit(max + 1);
  return rows.map((r) => r.id);
}
