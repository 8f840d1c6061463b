// Where an observer turn files what the developer said about themselves (the observer's `<scope>personal</scope>`,
// src/observer/parser.ts): the author's personal project and their manual session of it, made on first use through
// the one write policy. Never the session's project: a personal note is never team-visible, not even for a moment.
import { db, type Db } from '../db/client';
import { ensureMemberPersonalProject } from '../db/projects';
import { manualSession } from '../db/sessions';

export interface PersonalPlace {
  projectId: number;
  sessionDbId: number;
}

/** The author's personal place, or null when they are no longer a member (their personal notes are then dropped). */
export async function personalPlace(
  d1: D1Database | Db,
  author: { teamId: number; userId: number; deviceId: number | null },
  now: number,
): Promise<PersonalPlace | null> {
  const d = db(d1);
  const project = await ensureMemberPersonalProject(d, author.teamId, author.userId, now);
  if (!project) return null;
  return { projectId: project.id, sessionDbId: await manualSession(d, author, project.id, now) };
}
