// Seeds records that carry evidence: file rows with blob ids, names taken from the text as the one insert takes them.
import { env } from 'cloudflare:workers';
import { namesIn } from '../../../src/shared/names';
import { seedObservation, type Ids } from '../support/seed';

export const blob = (c: string) => c.repeat(40).slice(0, 40);
export const ws = (c: string) => c.repeat(16).slice(0, 16);

export interface CitedSeed {
  title: string;
  narrative?: string;
  createdAt: number;
  files: { path: string; blob: string | null; ws?: string; base?: string | null; kind: 'read' | 'modified' }[];
  gitBranch?: string | null;
  gitCommit?: string | null;
}

export async function seedCited(ids: Ids, projectId: number, sessionId: number, o: CitedSeed): Promise<number> {
  const id = await seedObservation(ids, projectId, sessionId, {
    title: o.title,
    narrative: o.narrative ?? null,
    createdAt: o.createdAt,
    filesRead: o.files.filter((f) => f.kind === 'read').map((f) => f.path),
    filesModified: o.files.filter((f) => f.kind === 'modified').map((f) => f.path),
  });
  await env.DB.prepare('UPDATE observations SET names = ?, git_branch = ?, git_commit = ? WHERE id = ?')
    .bind(JSON.stringify(namesIn([o.title, o.narrative])), o.gitBranch ?? null, o.gitCommit ?? null, id)
    .run();
  for (const f of o.files)
    await env.DB.prepare(
      'UPDATE observation_files SET blob = ?, ws = ?, base = ? WHERE observation_id = ? AND path = ? AND kind = ?',
    )
      .bind(f.blob, f.ws ?? null, f.base ?? null, id, f.path, f.kind)
      .run();
  return id;
}
