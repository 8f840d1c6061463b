// How the embed job works through the records it loaded: one piece (a chunk that fits one embedding call,
// index-records.ts chunkRecords) at a time, within the step's budget. A call the embedder refuses does not fail the
// job: the piece is split in halves and each is tried again, so every record that fits gets its vector, and a
// record refused on its own counts a failure (db/vectors.ts: after MAX_EMBED_FAILURES it is skipped by later
// runs) once a probe shows that the embedder answers other text. An embedder that is down charges no record: the
// probe fails too, the step fails and is retried later. Splitting costs at most two calls per halving, so one bad
// record in a chunk of n texts costs about 2·log2(n) calls more, once per run.
import { markEmbedFailed } from '../db/vectors';
import type { StepContext, UnitCost } from '../jobs/types';
import { errorText, log } from '../lib/log';
import { chunkRecords, chunkVectors, storeChunk, type LoadedRecord } from './index-records';
import type { VectorAdapters } from './types';

/** What the probe asks the embedder: short, plain, and no one's memory. */
const PROBE_TEXT = 'cairn embedding probe';

export interface PieceCounts {
  /** Records given their vectors. */
  embedded: number;
  /** Records the embedder refused alone (each counted one failure). */
  failed: number;
  /** The highest record id worked through (embedded or failed), or null when none was. */
  lastId: number | null;
}

/** One step's pieces: the probe's answer is kept for the step (one call at most). */
export class EmbedPieces {
  #probe: Promise<boolean> | null = null;

  constructor(
    private readonly ctx: StepContext,
    private readonly adapters: VectorAdapters,
    private readonly d: D1Database,
    private readonly teamId: number,
    private readonly unit: UnitCost,
  ) {}

  /**
   * Works through `records` (one kind, id order) while each next piece fits the step; answers what it did and
   * whether it stopped for the budget before the end (then `lastId` is where the next step goes on). `first`: the
   * step has done no unit yet (its first always runs).
   */
  async run(records: readonly LoadedRecord[], first: boolean): Promise<PieceCounts & { stopped: boolean }> {
    const out: PieceCounts & { stopped: boolean } = { embedded: 0, failed: 0, lastId: null, stopped: false };
    const queue = chunkRecords(records, this.adapters.embedder.limits);
    let started = first;
    while (queue.length > 0) {
      if (!started && !this.ctx.fits(this.unit)) {
        out.stopped = true;
        return out;
      }
      started = false;
      const piece = queue.shift()!;
      const vectors = await chunkVectors(this.adapters, piece).catch((err: unknown) => err as Error);
      if (!(vectors instanceof Error)) {
        this.ctx.holding(await storeChunk(this.adapters, this.d, this.teamId, piece, vectors, this.ctx.now));
        out.embedded += piece.length;
      } else if (piece.length > 1) {
        const half = Math.ceil(piece.length / 2);
        queue.unshift(piece.slice(0, half), piece.slice(half));
        continue;
      } else {
        const record = piece[0]!;
        // Refused alone: the record's fault only if the embedder answers other text.
        if (!(await this.#embedderAnswers())) throw vectors;
        await markEmbedFailed(this.d, this.teamId, record.kind, [record.id]);
        // The provider's error code only: a refusal's message may quote the text it refused.
        log('warn', 'a record was refused by the embedder; it counts a failure', {
          team_id: this.teamId,
          kind: record.kind,
          id: record.id,
          code: /\b[3-9]\d{3}\b/.exec(errorText(vectors))?.[0] ?? null,
        });
        out.failed++;
      }
      out.lastId = piece[piece.length - 1]!.id;
      await this.ctx.breathe();
    }
    return out;
  }

  #embedderAnswers(): Promise<boolean> {
    if (!this.#probe) {
      this.#probe = this.adapters.embedder.embed([PROBE_TEXT]).then(
        (v) => v.length === 1,
        () => false,
      );
    }
    return this.#probe;
  }
}
