// `cairn import`: Claude Code transcripts (the default), a cairn export (--ndjson) or a claude-mem database (--claude-mem).
import type { Io } from '../io';

export async function importAny(args: string[], io: Io): Promise<number> {
  if (args.some((a) => a === '--claude-mem' || a.startsWith('--claude-mem=')))
    return (await import('./import-claude-mem')).importClaudeMem(args, io);
  if (args.some((a) => a === '--ndjson' || a.startsWith('--ndjson=')))
    return (await import('./transfer')).importNdjson(args, io);
  return (await import('./import')).importTranscripts(args, io);
}
