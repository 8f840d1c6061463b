// THE visibility rule: which projects a caller may see, and from it which memory rows they may read. Every
// read of projects, observations, summaries and prompts builds its WHERE from the functions below; nothing
// else in the code base spells the rule out (test/worker/teams/isolation.test.ts proves each read route
// goes through `canSeeProject`).
import { and, eq, inArray, isNotNull, isNull, ne, notInArray, or, type SQL } from 'drizzle-orm';
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
  /**
   * Reads rows held back as instruction-like (src/shared/instructions.ts) that others wrote: owners and admins
   * acting with an admin-scoped token, who review and release them. Everyone reads their own held rows.
   */
  seesHeld: boolean;
}

/** What the rule needs to know about who is calling: their role and the token's scopes, when known. */
export type ViewerAuth = Pick<Caller, 'teamId' | 'userId'> & { role?: string; scopes?: readonly string[] };

/**
 * Admin power: an owner or admin acting with an `admin`-scoped token. Everything done to someone else's memory
 * (forgetting or superseding a teammate's record or session, forgetting a team project, reading others' jobs and
 * held rows) needs it; the role alone does not, so an admin's everyday hook or MCP token (scopes `ingest`, `read`)
 * acts as a member would. The admin routes check the same two things (src/admin/guard.ts).
 */
export const hasAdminPower = (auth: Pick<ViewerAuth, 'role' | 'scopes'>): boolean =>
  (auth.role === 'owner' || auth.role === 'admin') && (auth.scopes?.includes('admin') ?? false);

/** Owners and admins with an admin-scoped token read what is held back, to review and release it. */
export const seesHeld = hasAdminPower;

/** The caller as the project rule needs them. */
export type ProjectViewer = Pick<Viewer, 'teamId' | 'userId'>;

/** The Viewer for settings the caller already loaded. */
export function viewerOf(auth: ViewerAuth, settings: TeamSettings): Viewer {
  return {
    teamId: auth.teamId,
    userId: auth.userId,
    shareSensitive: settings.share_sensitive === true,
    seesHeld: seesHeld(auth),
  };
}

/**
 * What every member of the team may read, and so what may go where every member (or anyone they share it with) sees
 * it, such as the team's digest: the rule for a reader who owns nothing (no user has id 0). Team projects only, no
 * held row that is not released, `sensitive` rows only when the team shares them.
 */
export const everyMember = (teamId: number, settings: Pick<TeamSettings, 'share_sensitive'>): Viewer => ({
  teamId,
  userId: 0,
  shareSensitive: settings.share_sensitive === true,
  seesHeld: false,
});

/** Resolves the sensitive-sharing setting (read with the token); pass the Viewer to the builders below. */
export async function loadViewer(d1: D1Database, auth: ViewerAuth & Pick<Caller, 'settings'>): Promise<Viewer> {
  return viewerOf(auth, await settingsFor(d1, auth));
}

const qb = new QueryBuilder();

// Parameters take the columns the rule reads, so aliases (`alias(observations, 'o')`) fit as well as tables.
type Cols<K extends string> = Record<K, AnySQLiteColumn>;
type ProjectCols = Cols<'teamId' | 'visibility' | 'ownerUserId'>;
type HeldCols = Cols<'authorUserId' | 'heldKinds' | 'releasedAt'>;
type ObservationCols = Cols<'teamId' | 'projectId' | 'deletedAt' | 'type'> & HeldCols;
type SummaryCols = Cols<'teamId' | 'projectId' | 'deletedAt'> & HeldCols;
type PromptCols = Cols<'teamId' | 'projectId'> & HeldCols;

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
export const visibleProjectIds = (v: ProjectViewer) =>
  qb.select({ id: projects.id }).from(projects).where(canSeeProject(v));

/**
 * The hold-back: a row whose text read as instructions to the agent when it was stored (`held_kinds` set) is
 * read only by its author and by admins (`seesHeld`) until an admin releases it. Part of every rule below.
 */
export function notHeldFrom(v: Viewer, r: HeldCols): SQL | undefined {
  return v.seesHeld ? undefined : or(isNull(r.heldKinds), isNotNull(r.releasedAt), eq(r.authorUserId, v.userId));
}

/** The same rule for a row already read (the export's filter): true when `v` may read it. */
export const heldRowReadable = (
  v: Pick<Viewer, 'userId' | 'seesHeld'>,
  r: { authorUserId: number; heldKinds: string | null; releasedAt: number | null },
): boolean => v.seesHeld || r.heldKinds === null || r.releasedAt !== null || r.authorUserId === v.userId;

/**
 * Observations the viewer may read: their team, a visible project, not deleted, `sensitive` rows only
 * when they wrote them (or the team shares them), held rows only as `notHeldFrom` says. `o` may be an alias.
 */
export function canReadObservation(v: Viewer, o: ObservationCols = observations): SQL {
  return and(
    eq(o.teamId, v.teamId),
    isNull(o.deletedAt),
    inArray(o.projectId, visibleProjectIds(v)),
    v.shareSensitive ? undefined : or(notInArray(o.type, [...SENSITIVE_TYPES]), eq(o.authorUserId, v.userId)),
    notHeldFrom(v, o),
  )!;
}

/** Session summaries the viewer may read (team, visible project, not deleted, not held from them). */
export function canReadSummary(v: Viewer, s: SummaryCols = summaries): SQL {
  return and(
    eq(s.teamId, v.teamId),
    isNull(s.deletedAt),
    inArray(s.projectId, visibleProjectIds(v)),
    notHeldFrom(v, s),
  )!;
}

/** User prompts the viewer may read (team, visible project, not held from them). Prompts have no soft delete. */
export function canReadPrompt(v: Viewer, pm: PromptCols = prompts): SQL {
  return and(eq(pm.teamId, v.teamId), inArray(pm.projectId, visibleProjectIds(v)), notHeldFrom(v, pm))!;
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
    .where(
      and(
        eq(projects.teamId, v.teamId),
        eq(projects.visibility, 'private'),
        or(isNull(projects.ownerUserId), ne(projects.ownerUserId, v.userId)),
      ),
    )
    .limit(max + 1);
  return rows.map((r) => r.id);
}
