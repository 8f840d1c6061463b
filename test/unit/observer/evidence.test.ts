// File lists corrected from what the batch's tool calls really read and modified.
import { describe, expect, it } from 'vitest';
import { correctFileLists, extractFileEvidence } from '../../../src/observer/evidence';
import type { ObservationContent } from '#shared/wire/records';
import type { ToolEvent } from '../../../src/observer/types';

let n = 0;
const ev = (toolName: string, input: unknown): ToolEvent => ({
  eventId: `e${++n}`,
  toolName,
  toolInput: typeof input === 'string' ? input : JSON.stringify(input),
  toolResponse: '{}',
  cwd: '/repo',
  toolUseId: null,
  agentId: null,
  agentType: null,
  occurredAt: 1_700_000_000_000,
  promptNumber: 1,
});
const obs = (over: Partial<ObservationContent> = {}): ObservationContent => ({
  type: 'discovery',
  title: 't',
  subtitle: null,
  facts: [],
  narrative: null,
  concepts: [],
  filesRead: [],
  filesModified: [],
  ...over,
});

describe('extractFileEvidence', () => {
  it('collects reads and modifications from Read, write_file and apply_patch in both shapes', () => {
    const evidence = extractFileEvidence([
      ev('Read', { file_path: 'src/read.ts' }),
      ev('write_file', { filePath: 'src/write.ts', edits: [] }),
      ev('apply_patch', '*** Begin Patch\n*** Update File: src/patch.ts\n@@\n-a\n+b\n*** End Patch'),
      ev('apply_patch', { patch: '*** Begin Patch\n*** Update File: src/json-patch.ts\n@@\n-a\n+b\n*** End Patch' }),
      ev('Read', { file_path: 'src/read.ts' }),
    ]);
    expect(evidence).toEqual({
      read: ['src/read.ts'],
      modified: ['src/write.ts', 'src/patch.ts', 'src/json-patch.ts'],
    });
  });

  it('reads Edit, MultiEdit, Write and NotebookEdit paths', () => {
    const evidence = extractFileEvidence([
      ev('Edit', { file_path: '/repo/a.ts', old_string: 'x', new_string: 'y' }),
      ev('MultiEdit', { file_path: '/repo/b.ts', edits: [{ old_string: 'x', new_string: 'y' }] }),
      ev('Write', { file_path: '/repo/c.ts', content: 'z' }),
      ev('NotebookEdit', { notebook_path: '/repo/d.ipynb', new_source: 'print(1)' }),
    ]);
    expect(evidence.modified).toEqual(['/repo/a.ts', '/repo/b.ts', '/repo/c.ts', '/repo/d.ipynb']);
  });

  it('reads every kind of patch header: add, delete, move and unified diff', () => {
    const patch =
      '*** Add File: new.ts\n+x\n*** Delete File: old.ts\n*** Update File: a.ts\n*** Move to: b.ts\n--- a/c.ts\n+++ b/c.ts\n';
    expect(extractFileEvidence([ev('apply_patch', { input: patch })]).modified).toEqual([
      'new.ts',
      'old.ts',
      'a.ts',
      'b.ts',
      'c.ts',
    ]);
  });

  it('still finds the path when the input was cut by truncation and is no longer JSON', () => {
    const cut = `{"file_path": "/repo/big.ts", "content": "${'x'.repeat(100)}\n… <elided chars="5" original_size_chars="9" reason="oversize"/> …\nyyy"}`;
    expect(extractFileEvidence([ev('Write', cut)]).modified).toEqual(['/repo/big.ts']);
    const cutPatch = `{"patch": "*** Update File: src/cut.ts\\n@@\\n-a\\n+b ${'x'.repeat(50)}… <elided`;
    expect(extractFileEvidence([ev('apply_patch', cutPatch)]).modified).toEqual(['src/cut.ts']);
  });

  it('ignores tools that neither read nor write files', () => {
    expect(
      extractFileEvidence([ev('Bash', { command: 'cat src/x.ts' }), ev('Grep', { path: 'src', pattern: 'x' })]),
    ).toEqual({ read: [], modified: [] });
  });
});

describe('correctFileLists', () => {
  it('drops a modification the model invented for a file that was only read', () => {
    const [o] = correctFileLists(
      [obs({ filesRead: ['supabase/functions/edge/index.ts'], filesModified: ['supabase/functions/edge/index.ts'] })],
      [ev('Read', { file_path: 'supabase/functions/edge/index.ts' })],
    );
    expect(o!.filesRead).toEqual(['supabase/functions/edge/index.ts']);
    expect(o!.filesModified).toEqual([]);
  });

  it('fills in the modified file when the model listed none', () => {
    const [o] = correctFileLists(
      [obs()],
      [ev('write_file', { filePath: 'src/services/worker/agents/ResponseProcessor.ts' })],
    );
    expect(o!.filesModified).toEqual(['src/services/worker/agents/ResponseProcessor.ts']);
  });

  it('replaces a fabricated modification with the read evidence', () => {
    const [o] = correctFileLists(
      [obs({ filesModified: ['src/fabricated.ts'] })],
      [ev('Read', { file_path: 'src/read-only.ts' })],
    );
    expect(o!.filesRead).toEqual(['src/read-only.ts']);
    expect(o!.filesModified).toEqual([]);
  });

  it('puts read evidence first and keeps the model’s extra read claims without repeats', () => {
    const [o] = correctFileLists(
      [obs({ filesRead: ['docs/notes.md', 'src/a.ts'] })],
      [ev('Read', { file_path: 'src/a.ts' })],
    );
    expect(o!.filesRead).toEqual(['src/a.ts', 'docs/notes.md']);
  });

  it('keeps the model’s attribution when the evidence confirms it', () => {
    const events = [ev('Edit', { file_path: 'a.ts' }), ev('Edit', { file_path: 'b.ts' })];
    const [first, second] = correctFileLists(
      [obs({ filesModified: ['a.ts', 'ghost.ts'] }), obs({ filesModified: [] })],
      events,
    );
    expect(first!.filesModified).toEqual(['a.ts']);
    expect(second!.filesModified).toEqual(['a.ts', 'b.ts']);
  });
});
