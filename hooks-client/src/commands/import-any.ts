// `cairn import`: Claude Code transcripts (the default) or, with --ndjson, a cairn export.
import type { Io } from '../io';

export async function importAny(args: string[], io: Io): Promise<number> {
  if (args.some((a) => a === '--ndjson' || a.startsWith('--ndjson='))) return (await import('./transfer')).importNdjson(args, io);
  return (await import('./import')).importTranscripts(args, io);
}
