// Observer modes: the vocabulary (types, concepts) and prompt text, as bundled JSON with chained overrides.
import * as z from 'zod';
import code from './modes/code.json';
import codeZh from './modes/code--zh.json';
import codeJa from './modes/code--ja.json';
import codeKo from './modes/code--ko.json';
import codeEs from './modes/code--es.json';
import codeDe from './modes/code--de.json';
import codeFr from './modes/code--fr.json';
import codeChill from './modes/code--chill.json';

export const ObservationTypeDef = z.object({
  id: z.string().min(1),
  label: z.string(),
  description: z.string(),
  emoji: z.string(),
  workEmoji: z.string(),
});
export type ObservationTypeDef = z.infer<typeof ObservationTypeDef>;

export const ConceptDef = z.object({ id: z.string().min(1), label: z.string(), description: z.string() });
export type ConceptDef = z.infer<typeof ConceptDef>;

export const ModePrompts = z.object({
  identity: z.string(),
  role: z.string(),
  recordFocus: z.string(),
  skipGuidance: z.string(),
  typeGuidance: z.string(),
  conceptGuidance: z.string(),
  fieldGuidance: z.string(),
  languageRule: z.string(),
  outputRules: z.string(),
  placeholders: z.object({
    title: z.string(),
    subtitle: z.string(),
    fact: z.string(),
    narrative: z.string(),
    concept: z.string(),
    file: z.string(),
  }),
  summaryInstruction: z.string(),
  summaryPlaceholders: z.object({
    request: z.string(),
    investigated: z.string(),
    learned: z.string(),
    completed: z.string(),
    nextSteps: z.string(),
    notes: z.string(),
  }),
  continuationNote: z.string(),
});
export type ModePrompts = z.infer<typeof ModePrompts>;

export const Mode = z.object({
  id: z.string(),
  name: z.string(),
  language: z.string().optional(),
  observationTypes: z.array(ObservationTypeDef).min(1),
  concepts: z.array(ConceptDef),
  prompts: ModePrompts,
});
export type Mode = z.infer<typeof Mode>;

export const DEFAULT_MODE_ID = 'code';

/** Every bundled mode file by id: a base (`code`) or an override (`code--zh`). Workers have no filesystem. */
const FILES: Readonly<Record<string, unknown>> = {
  code,
  'code--zh': codeZh,
  'code--ja': codeJa,
  'code--ko': codeKo,
  'code--es': codeEs,
  'code--de': codeDe,
  'code--fr': codeFr,
  'code--chill': codeChill,
};

// Lower-case words joined by single hyphens, parts joined by '--'; anything else (paths, dots) is refused.
const MODE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:--[a-z0-9]+(?:-[a-z0-9]+)*)*$/;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Objects merge key by key; arrays and scalars in the override replace the base's value. */
export function deepMerge<T>(base: T, override: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(override)) return (override === undefined ? base : override) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key], value) : value;
  }
  return out as T;
}

const cache = new Map<string, Mode>();

/**
 * Loads a mode by id. `base--a--b` applies the overrides `base--a` then `base--b` left to right; unknown
 * override parts are ignored, and an invalid id or unknown base falls back to `code`. The returned `id`
 * names what was actually applied.
 */
export function loadMode(id: string | null | undefined): Mode {
  const wanted = (id ?? '').trim().toLowerCase();
  const cached = cache.get(wanted);
  if (cached) return cached;

  const parts = MODE_ID.test(wanted) ? wanted.split('--') : [DEFAULT_MODE_ID];
  let base = parts[0]!;
  if (!isPlainObject(FILES[base]) || !('observationTypes' in (FILES[base] as object))) base = DEFAULT_MODE_ID;

  let merged: unknown = FILES[base];
  const applied = [base];
  for (const part of parts.slice(1)) {
    const overrideId = `${base}--${part}`;
    const file = FILES[overrideId];
    if (!isPlainObject(file) || applied.includes(part)) continue;
    merged = deepMerge(merged, file);
    applied.push(part);
  }
  const mode = Mode.parse({ ...(merged as object), id: applied.join('--') });
  cache.set(wanted, mode);
  return mode;
}

/** The ids of every bundled mode file (bases and overrides), for settings screens and validation. */
export const bundledModeIds = (): string[] => Object.keys(FILES);

export const conceptIds = (mode: Mode): string[] => mode.concepts.map((c) => c.id);

/** Icon for a stored type; types the mode does not know get a neutral note icon. */
export const typeEmoji = (mode: Mode, type: string): string =>
  mode.observationTypes.find((t) => t.id === type)?.emoji ?? '📝';
