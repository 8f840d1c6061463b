// `cairn capture [on|off]` (and /cairn:capture from inside Claude Code): the person's answer to whether sessions in
// this checkout are recorded, kept on this machine (status/capture.ts). It answers a team's `ask`, and `off`
// opts this checkout out under any policy; it never lifts the admins' `off`. Without a word: what applies here.
import { pathsFor } from '../config';
import { answerCapture, checkoutMode, readCapture } from '../status/capture';
import type { Io } from '../io';
import { projectFor } from '../project/project-key';

const USAGE = 'usage: cairn capture [on|off]   (answers for this checkout; /cairn:capture on|off in Claude Code)\n';

const said: Record<string, (root: string) => string> = {
  on: (root) => `sessions in ${root} are recorded in the team's memory (/cairn:capture off stops it).`,
  off: (root) =>
    `nothing of sessions in ${root} is sent to the team's memory (memory is still recalled); /cairn:capture on records them.`,
  ask: (root) => `your team's admins ask before sessions in ${root} are recorded: answer /cairn:capture on or off.`,
};

export async function capture(args: string[], io: Io): Promise<number> {
  const words = args.flatMap((a) => a.split(/\s+/)).filter(Boolean);
  const word = words[0]?.toLowerCase();
  if (words.length > 1 || (word !== undefined && word !== 'on' && word !== 'off')) {
    io.err(`cairn capture: "${words.join(' ').slice(0, 40)}" is not on or off\n${USAGE}`);
    return 2;
  }
  const stateDir = pathsFor(io.env).stateDir;
  const { root } = projectFor(io.cwd, stateDir, io.now());
  if (word === undefined) {
    io.out(`cairn: ${said[checkoutMode(readCapture(stateDir), root)]!(root)}\n`);
    return 0;
  }
  const mode = answerCapture(stateDir, root, word, io.now());
  const overruled = word === 'on' && mode === 'off';
  io.out(
    overruled
      ? `cairn: noted, but your team's admins set capture off for ${root}: nothing is recorded there.\n`
      : `cairn: ${said[mode]!(root)}\n`,
  );
  return 0;
}
