// The mode view recall needs (type icons, allow-lists), behind one function so the observer's loader can back it.
import { configOf, type ConfigInput } from '../config';
import type { CairnEnv } from '../env';
import type { TeamSettings } from '../db/team-settings';
import { loadMode } from '../observer/modes';

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

/** Icon for a type id; unknown types (the mode changed since they were stored) get a neutral note icon. */
export const iconFor = (mode: RecallMode, type: string): string => mode.types.find((t) => t.id === type)?.emoji ?? '📝';

/** Mode id in force: team setting, else the deployment's CAIRN_MODE, else `code`. */
export function modeIdFor(env: ConfigInput, settings: TeamSettings): string {
  return settings.mode ?? configOf(env).mode;
}

/** Loads the mode recall renders with (the observer's mode files; unknown ids fall back to `code`). */
export function recallMode(id: string): RecallMode {
  const m = loadMode(id);
  return {
    id: m.id,
    name: m.name,
    types: m.observationTypes.map((t) => ({ id: t.id, label: t.label, emoji: t.emoji })),
    conceptIds: m.concepts.map((c) => c.id),
  };
}
