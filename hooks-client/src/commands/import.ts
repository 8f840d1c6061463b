// `cairn import <transcript.jsonl…>`: replays past Claude Code sessions as history; event ids make it idempotent.
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { loggedInConfig, pathsFor } from '../config';
import type { Io } from '../io';
import { scrubPayload, scrubText } from '../privacy/scrub';
import { metadataOnly } from '../privacy/sensitive-files';
import { stripMemoryTags } from '#shared/tags';
import { localKey } from '../project/remote';
import { projectFor } from '../project/project-key';
import { sendBatch } from '../spool/deliver';
import type { SpooledEvent } from '../spool/spool';
import { naturalEventId, transcriptEvents, type ImportedEvent } from '../transcript';
import { deliveryFor } from './account';

const CHUNK = 100;

/** The same privacy pipeline the live hooks apply, so imported history leaks nothing they would not. */
function toSpooled(e: ImportedEvent, project: string, projectRoot: string | null): SpooledEvent | null {
  const body: SpooledEvent['body'] = {
    event_id: e.eventId,
    session_id: e.sessionId,
    project,
    cwd: e.cwd,
    occurred_at: e.occurredAt,
    platform: 'claude-code',
  };
  if (projectRoot) body.project_root = projectRoot;
  if (e.kind === 'init') {
    const raw = String(e.fields.prompt ?? '');
    const stripped = stripMemoryTags(raw);
    return {
      kind: 'init',
      body: { ...body, prompt: stripped ? scrubText(stripped) : '', private: raw.trim() !== '' && stripped === '' },
    };
  }
  if (e.kind === 'observation') {
    const name = String(e.fields.tool_name);
    const sensitive = metadataOnly(name, e.fields.tool_input, e.fields.tool_response);
    return {
      kind: 'observation',
      body: {
        ...body,
        tool_name: name,
        tool_use_id: e.fields.tool_use_id,
        tool_input: scrubPayload(sensitive?.input ?? e.fields.tool_input),
        tool_response: scrubPayload(sensitive?.response ?? e.fields.tool_response),
      },
    };
  }
  if (e.kind === 'summarize') {
    const message = scrubText(String(e.fields.last_assistant_message ?? ''));
    // Keyed on the scrubbed text, exactly as the live Stop hook keys it, so a live copy is recognised.
    return message
      ? {
          kind: 'summarize',
          body: {
            ...body,
            event_id: naturalEventId(e.sessionId, 'summarize', message),
            last_assistant_message: message,
          },
        }
      : null;
  }
  return { kind: 'end', body: { ...body, reason: e.fields.reason ?? 'other' } };
}

function bar(done: number, total: number, width = 30): string {
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${total ? Math.round((done / total) * 100) : 100}% ${done}/${total} events`;
}

export async function importTranscripts(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { project: { type: 'string' } } });
  if (!positionals.length) {
    io.err('usage: cairn import <transcript.jsonl…> [--project <key>]\n');
    return 2;
  }
  const paths = pathsFor(io.env);
  const config = loggedInConfig(io, paths);
  if (!config) return 1;
  const all: SpooledEvent[] = [];
  for (const file of positionals) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      io.err(`cairn: cannot read ${file}: ${(e as Error).message}\n`);
      return 1;
    }
    for (const e of transcriptEvents(text, basename(file).replace(/\.jsonl$/, ''))) {
      // The root is known only while the transcript's folder still exists on this machine.
      const here = e.cwd && existsSync(e.cwd) ? projectFor(e.cwd, paths.stateDir, io.now()) : null;
      const project = values.project ?? here?.key ?? localKey(e.cwd || file);
      const s = toSpooled(e, project, here?.root ?? null);
      if (s) all.push(s);
    }
  }
  const delivery = deliveryFor(io, config, paths);
  let done = 0;
  let stored = 0;
  let refused = 0;
  const show = () => (io.isTty ? io.err(`\r${bar(done, all.length)}`) : undefined);
  show();
  for (let i = 0; i < all.length; i += CHUNK) {
    const chunk = all.slice(i, i + CHUNK);
    const outcomes = await sendBatch(delivery, chunk, io.now() + 60_000);
    for (let j = 0; j < chunk.length; j++) {
      const o = outcomes[j];
      if (!o || o.status === 'retry') {
        if (io.isTty) io.err('\n');
        io.err(
          `cairn: import stopped at event ${done + 1} of ${all.length}: ${o?.reason ?? 'no answer'}. Run the same command again; events already sent are skipped by the server.\n`,
        );
        return 1;
      }
      if (o.status === 'delivered') stored++;
      else refused++;
      done++;
    }
    show();
  }
  if (io.isTty) io.err('\n');
  io.out(
    `cairn: imported ${positionals.length} transcript(s): ${stored} events sent${refused ? `, ${refused} refused` : ''}.\n`,
  );
  return 0;
}
