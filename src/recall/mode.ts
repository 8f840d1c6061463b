// The mode view recall needs (type icons, allow-lists), behind one function so the observer's loader can back it.
import type { CairnEnv } from '../env';
import type { TeamSettings } from '../db/team-settings';

export interface RecallType {
  id: string;
  label: string;
  emoji: string;
}

export interface RecallMode {
  id: string;
  name: string;
  types: RecallType[];
  conceptIds: string[];
}

/** Icon for a type id; unknown types (a mode changed since they were stored) get a neutral mark. */
export const iconFor = (mode: RecallMode, type: string): string => mode.types.find((t) => t.id === type)?.emoji ?? '•';

// Fallback copy of the `code` mode's facts (reference §5) until the observer's mode loader is available.
const CODE_MODE: RecallMode = {
  id: 'code',
  name: 'Code',
  types: [
    { id: 'bugfix', label: 'Bug fix', emoji: '●' },
    { id: 'feature', label: 'Feature', emoji: '◆' },
    { id: 'refactor', label: 'Refactor', emoji: '↻' },
    { id: 'change', label: 'Change', emoji: '✓' },
    { id: 'discovery', label: 'Discovery', emoji: '○' },
    { id: 'decision', label: 'Decision', emoji: '⚖' },
    { id: 'security_alert', label: 'Security alert', emoji: '⚠' },
    { id: 'security_note', label: 'Security note', emoji: '⚷' },
    { id: 'sensitive', label: 'Sensitive', emoji: '⊘' },
  ],
  conceptIds: ['how-it-works', 'why-it-exists', 'what-changed', 'problem-solution', 'gotcha', 'pattern', 'trade-off'],
};

/** Mode id in force: team setting, else the deployment's CAIRN_MODE, else `code`. */
export function modeIdFor(env: Pick<CairnEnv, 'CAIRN_MODE'>, settings: TeamSettings): string {
  return settings.mode ?? env.CAIRN_MODE ?? 'code';
}

/** Loads the mode recall renders with. Language variants (`code--zh`) share their parent's types. */
export function recallMode(id: string): RecallMode {
  return { ...CODE_MODE, id: id || 'code' };
}
