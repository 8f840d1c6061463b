// MCP tools for a record's versions: `history` (its versions with what each changed), `edit` (its text, by its
// author or an admin) and `revert` (back to any version, itself a new version). The text they show is fenced.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { AuthContext } from '../auth/types';
import type { CairnEnv } from '../env';
import { parseWith } from '../lib/validate';
import { renderDiff, renderHistory } from '../versions/render';
import {
  editRecord,
  EditBody,
  recordDiff,
  recordHistory,
  reindexRecord,
  revertRecord,
  RevertBody,
} from '../versions/service';

/** What the tools share with the others of src/mcp/server.ts. */
export interface ToolKit {
  env: CairnEnv;
  auth: AuthContext;
  defer(work: Promise<unknown>): void;
  now(): number;
  text(t: string, isError?: boolean): CallToolResult;
  guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult>;
  requireWrite(auth: AuthContext): void;
  observationId(ref: number | string, field: string): number;
}

const IdArg = z.union([z.number().int().positive(), z.string().max(20)]);
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

export function registerVersionTools(server: McpServer, k: ToolKit): void {
  server.registerTool(
    'history',
    {
      title: 'Versions of a record',
      description:
        'Every version of an observation: who changed it, when, why and what changed (edits, corrections, flags, merges, reviews). ' +
        'Creation is version 1. Give from (and to) to see what changed between two versions instead.',
      inputSchema: {
        id: IdArg.describe('The observation: 12 or "#12".'),
        from: z.number().int().min(1).optional().describe('Diff from this version…'),
        to: z.number().int().min(1).optional().describe('…to this one (default: the current version).'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (a) =>
      k.guarded(async () => {
        const id = k.observationId(a.id, 'id');
        if (a.from !== undefined) return k.text(renderDiff(await recordDiff(k.env, k.auth, id, a.from, a.to ?? null)));
        return k.text(renderHistory(await recordHistory(k.env, k.auth, id)));
      }),
  );

  server.registerTool(
    'edit',
    {
      title: 'Edit a record',
      description:
        "Change an observation's text: title, subtitle, narrative, facts, concepts or files (each given replaces what it holds). " +
        'The old text stays as a version (see history; revert undoes it). Only its author or a team admin may; anyone can flag it instead (feedback).',
      inputSchema: {
        id: IdArg.describe('The observation: 12 or "#12".'),
        title: z.string().optional(),
        subtitle: z.string().nullable().optional(),
        narrative: z.string().nullable().optional(),
        facts: z.array(z.string()).optional(),
        concepts: z.array(z.string()).optional(),
        files: z.array(z.string()).optional().describe("The record's whole file list (project-relative paths)."),
        reason: z.string().optional().describe('Why, in a sentence.'),
      },
      annotations: WRITE,
    },
    (a) =>
      k.guarded(async () => {
        k.requireWrite(k.auth);
        const input = parseWith(EditBody, { ...a, id: k.observationId(a.id, 'id') }, 'invalid_arguments');
        const done = await editRecord(k.env, k.auth, input, k.now());
        if (!done.changed.length)
          return k.text(`#${done.id} already says that; nothing changed (version ${done.version}).`);
        k.defer(reindexRecord(k.env, k.auth.teamId, done.id));
        return k.text(`Edited #${done.id} (${done.changed.join(', ')}): it is version ${done.version} now.`);
      }),
  );

  server.registerTool(
    'revert',
    {
      title: 'Revert a record',
      description:
        'Put an observation back as it was at an earlier version (its text, and whether it was current): a new version; nothing is lost. ' +
        'Only its author or a team admin may.',
      inputSchema: {
        id: IdArg.describe('The observation: 12 or "#12".'),
        to: z.number().int().min(1).describe('The version to go back to (history lists them; 1 is as created).'),
        reason: z.string().optional(),
      },
      annotations: WRITE,
    },
    (a) =>
      k.guarded(async () => {
        k.requireWrite(k.auth);
        const input = parseWith(RevertBody, { ...a, id: k.observationId(a.id, 'id') }, 'invalid_arguments');
        const done = await revertRecord(k.env, k.auth, input, k.now());
        if (!done.changed.length) return k.text(`#${done.id} is already as it was at version ${done.reverted_to}.`);
        k.defer(reindexRecord(k.env, k.auth.teamId, done.id));
        return k.text(
          `#${done.id} is back to version ${done.reverted_to} (${done.changed.join(', ')}): version ${done.version} now.`,
        );
      }),
  );
}
