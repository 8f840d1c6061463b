// THE write policy: which keys only the server makes, which projects and sessions a caller may write into,
// whose name a row carries, and where an imported row goes. Every path that writes memory (ingest, `remember`,
// the admin routes, import and the team move) decides with these functions; nothing else spells the rules out.
// Pure: lookups are done by the callers (db/projects.ts, db/sessions.ts, src/transfer/) and handed in.
import { inertLine } from '#shared/inert';
import { redact } from '#shared/redact';
import { AppError } from '../lib/errors';
import type { Caller } from './caller';

// --- project keys ----------------------------------------------------------------------------------------

/**
 * Keys without a remote (`local/<folder>`) belong to one user: they are stored as `local/<handle>/<folder>`
 * so that two people's `local/app` never meet, and they are private.
 */
export function storedProjectKey(key: string, handle: string): string {
  // `#` is the server's own separator for shadow projects (`<key>#<handle>`): a client's `#` is stored escaped,
  // so no key a client sends can name a shadow. A key is one inert line (no control or bidi character reaches an
  // admin's terminal through `cairn admin projects`) and carries no secret (a remote URL's token).
  const k = redact(inertLine(key)).trim().replace(/#/g, '%23');
  if (k.startsWith('local/') && !k.startsWith(`local/${handle}/`)) return `local/${handle}/${k.slice('local/'.length)}`;
  return k;
}

/**
 * Keys only the server makes: `local/…` (a user's own folder without a remote, `local/<handle>/…`) and any
 * key holding `#` (shadow projects). Renames, merges and visibility changes may not produce or take them.
 */
export const isReservedProjectKey = (key: string): boolean => key.trim().startsWith('local/') || key.includes('#');

/**
 * When a teammate works under a key that names someone else's private project, their memory goes to a
 * private project of their own under this shadow key, so the owner's project is neither written nor revealed.
 */
export const shadowProjectKey = (key: string, handle: string) => `${key}#${handle}`;

/**
 * A person's own memory (issue 36): one private project per member, `#personal/<handle>`, made by the server only
 * (a client's `#` is stored escaped, so no key a client sends names it; a handle has no `#` or `/`, so it never
 * reads as a shadow key either). It follows its owner into every project's context and is in no team view.
 */
export const PERSONAL_PREFIX = '#personal/';
export const personalProjectKey = (handle: string): string => `${PERSONAL_PREFIX}${handle}`;
export const isPersonalProjectKey = (key: string): boolean => key.startsWith(PERSONAL_PREFIX);

/** A new project's visibility: `local/…` and personal keys are always private, others as asked. */
export const newProjectVisibility = (storedKey: string, wanted: 'team' | 'private'): 'team' | 'private' =>
  storedKey.startsWith('local/') || isPersonalProjectKey(storedKey) ? 'private' : wanted;

/**
 * The key an imported project line names, as the importer's own: their own shadow (`<key>#<their handle>`, as
 * an export of their memory writes it) is the key itself, and everything else is read as a client's key (so
 * `local/<someone>/…` becomes the importer's own `local/<handle>/…` and another's `#` is escaped).
 */
export function importedProjectKey(key: string, handle: string): string {
  const own = `#${handle}`;
  const k = key.trim();
  // Someone's personal memory (their own export of it) becomes the importer's own personal memory.
  if (isPersonalProjectKey(k)) return personalProjectKey(handle);
  return storedProjectKey(k.endsWith(own) && k.length > own.length ? k.slice(0, -own.length) : k, handle);
}

// --- who may write where --------------------------------------------------------------------------------

export interface ProjectAccess {
  visibility: 'team' | 'private';
  ownerUserId: number | null;
}

/** A caller writes into team projects and their own private ones, never into another's private project. */
export const mayWriteProject = (caller: Pick<Caller, 'userId'>, p: ProjectAccess): boolean =>
  p.visibility === 'team' || p.ownerUserId === caller.userId;

/**
 * Who may put records into a project (issue 38), on top of mayWriteProject: a `reader` puts none into the team's
 * projects, and the team setting `project_writers` (`{project key: [handles]}`) lets only the members it lists put
 * records into that project. A person's own private project is theirs whatever the role or list: their personal
 * memory is never blocked. Every path that stores records asks it (ingest: the event is skipped; remember, prime,
 * import, edit and revert: 403), so a listed project's records come only from its writers.
 */
export type WriteRefusal = 'reader' | 'not_a_writer';

export function writeRefusal(
  writer: Pick<Caller, 'userId' | 'handle' | 'role'>,
  project: ProjectAccess & { key: string },
  writers: Readonly<Record<string, readonly string[]>> | undefined,
): WriteRefusal | null {
  if (project.visibility === 'private' && project.ownerUserId === writer.userId) return null;
  if (writer.role === 'reader') return 'reader';
  const list = writers?.[project.key];
  return list && !list.includes(writer.handle) ? 'not_a_writer' : null;
}

/** writeRefusal as the 403 a request answers. */
export function assertMayWrite(
  writer: Pick<Caller, 'userId' | 'handle' | 'role'>,
  project: ProjectAccess & { key: string },
  writers: Readonly<Record<string, readonly string[]>> | undefined,
): void {
  const refusal = writeRefusal(writer, project, writers);
  if (refusal === 'reader')
    throw new AppError(
      403,
      'reader_role',
      `Readers do not write to the team's projects (${project.key}); your own private projects are yours to write.`,
    );
  if (refusal === 'not_a_writer')
    throw new AppError(
      403,
      'not_a_project_writer',
      `Records in ${project.key} come only from the members its admins listed (project_writers); ask an admin to add you.`,
    );
}

/** A project found by key, as the policy needs it. */
export interface KeyedProject extends ProjectAccess {
  id: number;
  key: string;
}

/** What a write under a key does: use a project the caller may write, or make one (its key and visibility). */
export type ProjectChoice =
  | { kind: 'use'; project: KeyedProject }
  | { kind: 'create'; key: string; visibility: 'team' | 'private' }
  | { kind: 'unavailable' };

/**
 * Where a write under `key` (already stored form) goes, given the rows found for the key, its shadow and the
 * key as an alias. The same order as ingest's `ensureProject`: the key's own project when the caller may write
 * it, else a project the key is an alias of, else the caller's shadow of the key; a free key is made (owned by
 * the caller); a key held by someone's private project, as its key or an alias, sends the write to the caller's
 * own private shadow.
 */
export function chooseProject(
  caller: Pick<Caller, 'userId' | 'handle'>,
  key: string,
  found: { byKey: KeyedProject | null; byAlias: KeyedProject | null; shadow: KeyedProject | null },
  wanted: 'team' | 'private',
): ProjectChoice {
  if (found.byKey && mayWriteProject(caller, found.byKey)) return { kind: 'use', project: found.byKey };
  if (found.byAlias && mayWriteProject(caller, found.byAlias)) return { kind: 'use', project: found.byAlias };
  const ownShadow = found.shadow && found.shadow.visibility === 'private' && found.shadow.ownerUserId === caller.userId;
  if (ownShadow) return { kind: 'use', project: found.shadow! };
  // A key that names a project, or is the old name (alias) of one the caller may not write (someone's private
  // project), is not free: a project made there would take the owner's own writes under their old key.
  if (!found.byKey && !found.byAlias) return { kind: 'create', key, visibility: newProjectVisibility(key, wanted) };
  // Only the server makes `#` keys, so the shadow is free or the caller's; a row there that is not (made before
  // import kept this rule) is never written into.
  if (found.shadow) return { kind: 'unavailable' };
  return { kind: 'create', key: shadowProjectKey(key, caller.handle), visibility: 'private' };
}

/** The keys to look up for a write under `key` (stored form): the key itself and the caller's shadow of it. */
export const projectLookupKeys = (key: string, handle: string): string[] => [key, shadowProjectKey(key, handle)];

/** chooseProject with what a lookup of projectLookupKeys found (projectsByKeys: by key, and keys as aliases). */
export const chooseFoundProject = (
  caller: Pick<Caller, 'userId' | 'handle'>,
  key: string,
  found: { byKey: ReadonlyMap<string, KeyedProject>; byAlias: ReadonlyMap<string, KeyedProject> },
  wanted: 'team' | 'private',
): ProjectChoice =>
  chooseProject(
    caller,
    key,
    {
      byKey: found.byKey.get(key) ?? null,
      byAlias: found.byAlias.get(key) ?? null,
      shadow: found.byKey.get(shadowProjectKey(key, caller.handle)) ?? null,
    },
    wanted,
  );

// --- sessions ---------------------------------------------------------------------------------------------

/** Session keys only the server makes: `manual:` (what `remember` stores) and `import:` (an import's own). */
export const SERVER_SESSION_PREFIXES = ['manual:', 'import:'] as const;

export const isServerSessionKey = (key: string): boolean => SERVER_SESSION_PREFIXES.some((p) => key.startsWith(p));

/** Key of the per-user, per-project session that holds remembered observations. */
export const manualSessionKey = (projectId: number, userId: number) => `manual:${projectId}:${userId}`;

/** The importer's own session for a file's session key that is taken (or that only the server may make). */
export const importedSessionKey = (userId: number, key: string) => `import:${userId}:${key}`;

/** A session row as the policy needs it. */
export interface SessionAccess {
  userId: number;
  /** Set when an import made it; live sessions (hooks, `remember`) have none. */
  importedAt: number | null;
}

/** A live write (hook event, `remember`) goes only into the caller's own session, never into one an import made. */
export const mayWriteLiveSession = (caller: Pick<Caller, 'userId'>, s: SessionAccess): boolean =>
  s.userId === caller.userId && s.importedAt === null;

/** An import writes only into sessions it made for the same caller: never a live one, never someone else's. */
export const mayImportIntoSession = (caller: Pick<Caller, 'userId'>, s: SessionAccess): boolean =>
  s.userId === caller.userId && s.importedAt !== null;

/**
 * The stored key of a file's session `key` for this importer. The file's key when it is free or already the
 * importer's imported session; otherwise (a live session, anyone else's, or a server-made `manual:`/`import:`
 * key) the importer's own `import:<user id>:<key>`, so an import never numbers a prompt in a live session nor
 * takes a key someone else may use, and answers the same whether the key was taken or not.
 */
export function importSessionKey(caller: Pick<Caller, 'userId'>, key: string, existing: SessionAccess | null): string {
  if (isServerSessionKey(key)) return importedSessionKey(caller.userId, key);
  if (existing === null || mayImportIntoSession(caller, existing)) return key;
  return importedSessionKey(caller.userId, key);
}

// --- authorship -----------------------------------------------------------------------------------------

/**
 * Who a row written for `caller` is by: always the caller; a different handle the source named is kept as
 * provenance only (`imported_author`), never as the row's owner.
 */
export function authorship(
  caller: Pick<Caller, 'userId' | 'handle'>,
  namedHandle: string | null,
): { authorUserId: number; importedAuthor: string | null } {
  return {
    authorUserId: caller.userId,
    importedAuthor: namedHandle !== null && namedHandle !== caller.handle ? namedHandle : null,
  };
}
