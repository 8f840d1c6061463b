// The offline spool: an append-only JSONL file of events not yet delivered, with a cursor of what was.
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { killPoint } from '../util/kill-point';
import { acquireLock } from './lock';

import type { EventKind } from '#shared/wire/events';

export type { EventKind };

export interface SpooledEvent {
  kind: EventKind;
  /** The request body, `event_id` included: replays reuse it so the server can ignore repeats. */
  body: Record<string, unknown> & { event_id: string };
}

export interface SpoolMeta {
  /** Byte offset up to which events were delivered (or given up on). */
  offset: number;
  appended: number;
  delivered: number;
  /** Events refused because the spool was full (cumulative, so the loss is reported even after a drain). */
  dropped: number;
  /** The last `client_seq` handed out: never reset, so one machine's events stay ordered across drains. */
  seq: number;
}

export interface SpoolLimits {
  maxEvents: number;
  maxBytes: number;
  /** How long an append waits for the lock before writing its line without counting it (default 2 s). */
  lockWaitMs?: number;
}

export interface SpoolStats extends SpoolMeta {
  pendingEvents: number;
  pendingBytes: number;
  /** Fraction of the nearer bound in use, 0..1. */
  fill: number;
}

const LOCK_WAIT_MS = 2_000;

export class Spool {
  readonly file: string;
  readonly metaFile: string;
  readonly lockFile: string;
  readonly replayLockFile: string;
  readonly deadFile: string;

  constructor(
    readonly dir: string,
    readonly limits: SpoolLimits,
  ) {
    this.file = join(dir, 'spool.jsonl');
    this.metaFile = join(dir, 'spool.meta.json');
    this.lockFile = join(dir, 'spool.lock');
    this.replayLockFile = join(dir, 'replay.lock');
    this.deadFile = join(dir, 'dead.jsonl');
  }

  /** Cheap check for the common path: one stat, and the meta file only when the spool is not empty. */
  hasPending(): boolean {
    const size = sizeOf(this.file);
    return size > 0 && size > this.readMeta().offset;
  }

  readMeta(): SpoolMeta {
    try {
      const m = JSON.parse(readFileSync(this.metaFile, 'utf8')) as Partial<SpoolMeta>;
      return {
        offset: m.offset ?? 0,
        appended: m.appended ?? 0,
        delivered: m.delivered ?? 0,
        dropped: m.dropped ?? 0,
        seq: m.seq ?? 0,
      };
    } catch {
      return { offset: 0, appended: 0, delivered: 0, dropped: 0, seq: 0 };
    }
  }

  stats(): SpoolStats {
    const meta = this.readMeta();
    const pendingBytes = Math.max(0, sizeOf(this.file) - meta.offset);
    const pendingEvents = pendingBytes === 0 ? 0 : Math.max(0, meta.appended - meta.delivered);
    const fill = Math.max(pendingEvents / this.limits.maxEvents, pendingBytes / this.limits.maxBytes);
    return { ...meta, pendingEvents, pendingBytes, fill };
  }

  /**
   * Appends one event under the lock (lines can exceed PIPE_BUF, so O_APPEND alone is not enough on every
   * filesystem), stamping it with the next `client_seq`. Returns that number, or null when the spool is full
   * (the event is counted as dropped).
   *
   * Why no fsync: the threat is the hook process being killed (Claude Code ending it), and a write(2) that
   * returned is in the kernel's page cache, which outlives the process. Only a machine crash in the next few
   * seconds could lose it, and an fsync per tool call would cost more than the rest of the hook.
   */
  append(event: SpooledEvent): number | null {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const release = acquireLock(this.lockFile, this.limits.lockWaitMs ?? LOCK_WAIT_MS);
    try {
      const meta = this.readMeta();
      const size = sizeOf(this.file);
      // A cursor past the end means the file was emptied without its meta (an old client killed while
      // compacting): all that is in it now is new.
      if (meta.offset > size) meta.offset = 0;
      const seq = meta.seq + 1;
      event.body.client_seq = seq;
      const line = `${JSON.stringify(event)}\n`;
      const pendingBytes = size - meta.offset;
      if (
        meta.appended - meta.delivered >= this.limits.maxEvents ||
        pendingBytes + Buffer.byteLength(line) > this.limits.maxBytes
      ) {
        if (release) this.writeMeta({ ...meta, dropped: meta.dropped + 1 });
        delete event.body.client_seq;
        return null;
      }
      // The number is taken before the line is written: a kill in between leaves a gap, never a repeat.
      if (release) this.writeMeta({ ...meta, appended: meta.appended + 1, seq });
      killPoint('append-meta-written');
      // One write(2) on an O_APPEND descriptor: even without the lock (holder stuck), lines stay whole.
      appendFileSync(this.file, line, { mode: 0o600 });
      return seq;
    } finally {
      release?.();
    }
  }

  /**
   * Reads the next undelivered events from the cursor: at most `max` events and about `maxBytes` (at least
   * one event). Lines that do not parse (a crash mid-write) are returned as null so they can be skipped.
   */
  readBatch(max: number, maxBytes: number): Array<{ event: SpooledEvent | null; bytes: number }> {
    const { offset } = this.readMeta();
    const size = sizeOf(this.file);
    if (size <= offset) return [];
    const want = Math.min(size - offset, Math.max(maxBytes, 1) + 1);
    let buf = readAt(this.file, offset, want);
    let text = buf.toString('utf8');
    if (!text.includes('\n') && size - offset > want) {
      buf = readAt(this.file, offset, size - offset);
      text = buf.toString('utf8');
    }
    const out: Array<{ event: SpooledEvent | null; bytes: number }> = [];
    let used = 0;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1 && out.length < max; nl = text.indexOf('\n', start)) {
      const lineText = text.slice(start, nl);
      const bytes = Buffer.byteLength(lineText) + 1;
      if (out.length && used + bytes > maxBytes) break;
      let event: SpooledEvent | null = null;
      try {
        const parsed = JSON.parse(lineText) as SpooledEvent;
        if (parsed && typeof parsed.kind === 'string' && parsed.body && typeof parsed.body.event_id === 'string')
          event = parsed;
      } catch {
        event = null;
      }
      out.push({ event, bytes });
      used += bytes;
      start = nl + 1;
    }
    return out;
  }

  /** Moves the cursor past `count` events spanning `bytes`; compacts the file once everything is delivered. */
  advance(count: number, bytes: number): void {
    const release = acquireLock(this.lockFile, this.limits.lockWaitMs ?? LOCK_WAIT_MS);
    try {
      const meta = this.readMeta();
      const next = { ...meta, offset: meta.offset + bytes, delivered: meta.delivered + count };
      if (release && next.offset >= sizeOf(this.file)) {
        // Nothing pending and appenders are locked out: start a fresh, empty spool. The cursor goes back
        // first: killed between the two steps, the delivered events are sent again (the server ignores
        // repeats by event_id), never skipped.
        this.writeMeta({ offset: 0, appended: 0, delivered: 0, dropped: meta.dropped, seq: meta.seq });
        killPoint('advance-meta-written');
        const fd = openSync(this.file, 'r+');
        try {
          ftruncateSync(fd, 0);
        } finally {
          closeSync(fd);
        }
      } else {
        this.writeMeta(next);
      }
    } finally {
      release?.();
    }
  }

  /** Keeps an event the server refused for good, for the user to inspect (bounded to the newest few). */
  bury(event: SpooledEvent | null, reason: string): void {
    try {
      const line = `${JSON.stringify({ at: new Date().toISOString(), reason, kind: event?.kind, event_id: event?.body.event_id })}\n`;
      if (sizeOf(this.deadFile) > 1_000_000) renameSync(this.deadFile, `${this.deadFile}.old`);
      appendFileSync(this.deadFile, line, { mode: 0o600 });
    } catch {
      // the dead-letter log is informational
    }
  }

  private writeMeta(meta: SpoolMeta): void {
    const tmp = `${this.metaFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(meta));
    renameSync(tmp, this.metaFile);
  }
}

function sizeOf(p: string): number {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
}

function readAt(p: string, offset: number, length: number): Buffer {
  const fd = openSync(p, 'r');
  try {
    const buf = Buffer.alloc(length);
    const n = readSync(fd, buf, 0, length, offset);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}
