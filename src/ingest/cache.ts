// A small per-isolate memo for ingest lookups that hardly ever change (a session's row, a project's id), so
// the hot path of a busy session skips two D1 round trips. Entries expire; a miss just asks D1 again.

export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 2_000,
  ) {}

  get(key: string, now: number): V | undefined {
    const hit = this.#entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, now: number): void {
    // Maps iterate in insertion order: dropping the first key evicts the oldest entry.
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, expiresAt: now + this.ttlMs });
  }

  async getOrLoad(key: string, now: number, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key, now);
    if (hit !== undefined) return hit;
    const value = await load();
    this.set(key, value, now);
    return value;
  }
}
