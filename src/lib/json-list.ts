// Stored JSON arrays of strings (facts, concepts, file lists are JSON text columns in D1).

/** Parses a stored JSON array of strings; anything else (null, bad JSON, other values) is an empty list or is left out. */
export function jsonList(raw: string | null | undefined): string[] {
  try {
    const v: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
