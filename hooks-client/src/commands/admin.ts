// `cairn admin …`: team administration. Owned by the teams engineer; this is the dispatch point they fill.
import type { Io } from '../io';

export async function admin(args: string[], io: Io): Promise<number> {
  io.err(`cairn admin ${args.join(' ')}: not available in this client yet.\n`);
  return 2;
}
