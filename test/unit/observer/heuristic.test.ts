// The no-LLM observer: realistic tool calls become sensible observations, noise is skipped.
import { describe, expect, it } from 'vitest';
import { loadMode } from '../../../src/observer/modes';
import { createHeuristicProvider } from '../../../src/observer/providers/heuristic';
import { runTurn } from '../../../src/observer/turn';
import type { ObservationContent } from '#shared/wire/records';
import type { SummaryRequest, ToolEvent } from '../../../src/observer/types';
import { summaryRequest, T0, toolEvent } from '../../support/observer-events';

const mode = loadMode('code');
const session = {
  project: 'github.com/acme/widgets',
  sessionKey: 's-h',
  promptNumber: 1,
  userPrompt: 'Make the login test pass',
};

async function observe(events: ToolEvent[], summary: SummaryRequest | null = null) {
  const outcome = await runTurn(createHeuristicProvider(), { mode, session, events, summary, now: T0, state: null });
  return outcome;
}
async function observations(events: ToolEvent[]): Promise<ObservationContent[]> {
  const outcome = await observe(events);
  if (outcome.kind === 'empty') return [];
  if (outcome.kind !== 'parsed') throw new Error(`unexpected ${outcome.kind}`);
  return outcome.observations;
}

describe('the heuristic observer', () => {
  it('turns an Edit into a change with the file it modified', async () => {
    const [o, ...rest] = await observations([
      toolEvent(
        'Edit',
        { file_path: '/home/dev/widgets/src/auth.ts', old_string: 'ttl = 60', new_string: 'ttl = 86400' },
        { filePath: '/home/dev/widgets/src/auth.ts' },
      ),
    ]);
    expect(rest).toHaveLength(0);
    expect(o).toMatchObject({
      type: 'change',
      title: 'Edited auth.ts',
      filesModified: ['/home/dev/widgets/src/auth.ts'],
    });
    expect(o!.facts.join(' ')).toContain('ttl = 86400');
    expect(o!.concepts).toEqual(['what-changed']);
  });

  it('writes paths and working folders relative to the project root, so memory reads the same on every checkout', async () => {
    const root = { projectRoot: '/home/dev/widgets' };
    const [edit] = await observations([
      toolEvent('Edit', { file_path: '/home/dev/widgets/src/auth.ts', old_string: 'a', new_string: 'b' }, {}, root),
    ]);
    expect(edit).toMatchObject({ title: 'Edited auth.ts', subtitle: 'src/auth.ts' });
    expect(`${edit!.narrative} ${edit!.facts.join(' ')}`).not.toContain('/home/dev');
    const [ran] = await observations([
      toolEvent(
        'Bash',
        { command: 'npm test' },
        { stdout: 'ok', exit_code: 0 },
        { ...root, cwd: '/home/dev/widgets/packages/api' },
      ),
    ]);
    expect(ran!.narrative).toContain('in packages/api');
    expect(ran!.narrative).not.toContain('/home/dev');
  });

  it('says a Write created a file when the tool reports a create', async () => {
    const [o] = await observations([
      toolEvent(
        'Write',
        { file_path: '/w/src/new.ts', content: 'export const x = 1;' },
        { type: 'create', filePath: '/w/src/new.ts' },
      ),
    ]);
    expect(o!.title).toBe('Created new.ts');
    expect(o!.filesModified).toEqual(['/w/src/new.ts']);
  });

  it('folds several edits of one file into one observation and keeps files apart', async () => {
    const list = await observations([
      toolEvent('MultiEdit', {
        file_path: '/w/a.ts',
        edits: [
          { old_string: 'a', new_string: 'b' },
          { old_string: 'c', new_string: 'd' },
        ],
      }),
      toolEvent('Edit', { file_path: '/w/a.ts', old_string: 'e', new_string: 'f' }),
      toolEvent('Edit', { file_path: '/w/b.ts', old_string: 'g', new_string: 'h' }),
    ]);
    expect(list.map((o) => o.filesModified)).toEqual([['/w/a.ts'], ['/w/b.ts']]);
  });

  it('records a failing command as a discovery with its exit code and error line', async () => {
    const [o] = await observations([
      toolEvent(
        'Bash',
        { command: 'npm test', description: 'Run tests' },
        {
          stdout: 'FAIL test/login.test.ts\n  Error: expected 302 to be 200',
          stderr: '',
          exit_code: 1,
          interrupted: false,
        },
      ),
    ]);
    expect(o!.type).toBe('discovery');
    expect(o!.title).toBe('Command failed: npm test');
    expect(o!.facts.join(' ')).toContain('exited with code 1');
    expect(o!.narrative).toContain('expected 302 to be 200');
  });

  it('spots a failure from stderr when there is no exit code', async () => {
    const [o] = await observations([
      toolEvent(
        'Bash',
        { command: 'npx tsc' },
        { stdout: '', stderr: "src/a.ts(3,1): error TS2304: Cannot find name 'x'.", interrupted: false },
      ),
    ]);
    expect(o!.title).toBe('Command failed: npx tsc');
  });

  it('records a command reported through PostToolUseFailure as failed, with its error, and its later pass as a bugfix', async () => {
    const list = await observations([
      toolEvent(
        'Bash',
        { command: 'npm test' },
        { is_error: true, error: 'Exit code 1\nFAIL src/math.test.ts\nexpected 3, received -1' },
      ),
      toolEvent(
        'Bash',
        { command: 'npm test' },
        { stdout: 'PASS src/math.test.ts', stderr: '', interrupted: false, isImage: false },
      ),
    ]);
    expect(list.map((o) => o.title)).toEqual(['Command failed: npm test', 'Now passing: npm test']);
    expect(list[0]!.facts.join(' ')).toContain('FAIL src/math.test.ts');
  });

  it('records a command that passes after failing in the same batch as a bugfix', async () => {
    const list = await observations([
      toolEvent('Bash', { command: 'npm test' }, { stdout: '1 failed', stderr: 'Error: boom', exit_code: 1 }),
      toolEvent('Edit', { file_path: '/w/src/login.ts', old_string: 'a', new_string: 'b' }),
      toolEvent('Bash', { command: 'npm test' }, { stdout: '12 passed', stderr: '', exit_code: 0 }),
    ]);
    expect(list.map((o) => o.type)).toEqual(['change', 'discovery', 'bugfix']);
    expect(list[2]!.title).toBe('Now passing: npm test');
  });

  it('sees through a leading cd when deciding whether a command only looks around', async () => {
    const list = await observations([
      toolEvent('Bash', { command: 'cd /w && npm run build' }, { stdout: 'built', stderr: '', exit_code: 0 }),
      toolEvent('Bash', { command: 'cd /w && ls | head' }, { stdout: 'a', stderr: '', exit_code: 0 }),
    ]);
    expect(list.map((o) => o.title)).toEqual(['Ran: cd /w && npm run build']);
  });

  it('records a meaningful successful command as a change', async () => {
    const [o] = await observations([
      toolEvent('Bash', { command: 'npm install zod@4' }, { stdout: 'added 1 package', stderr: '' }),
    ]);
    expect(o).toMatchObject({ type: 'change', title: 'Ran: npm install zod@4' });
  });

  it('skips reads, searches, listings and look-around commands', async () => {
    const outcome = await observe([
      toolEvent('Read', { file_path: '/w/a.ts' }, { content: 'x' }),
      toolEvent('Grep', { pattern: 'login', path: '/w' }, { matches: [] }),
      toolEvent('Glob', { pattern: '**/*.ts' }, { files: [] }),
      toolEvent('Bash', { command: 'ls -la' }, { stdout: 'a b c', stderr: '' }),
      toolEvent('Bash', { command: 'git status' }, { stdout: 'clean', stderr: '' }),
      toolEvent('TodoWrite', { todos: [] }, {}),
    ]);
    expect(outcome.kind).toBe('empty');
  });

  it('records a failure of any other tool', async () => {
    const [o] = await observations([
      toolEvent('mcp__db__query', { sql: 'select 1' }, { is_error: true, error: 'connection refused' }),
    ]);
    expect(o).toMatchObject({ type: 'discovery', title: 'mcp__db__query failed' });
  });

  it('writes a minimal summary from the request and the last message', async () => {
    const outcome = await observe([], summaryRequest('The login test passes now.'));
    expect(outcome.kind).toBe('parsed');
    if (outcome.kind !== 'parsed') return;
    expect(outcome.summary).toMatchObject({
      request: 'Make the login test pass',
      completed: 'The login test passes now.',
      skipped: false,
    });
  });

  it('skips the summary when there is nothing to summarise', async () => {
    const outcome = await runTurn(createHeuristicProvider(), {
      mode,
      session: { ...session, userPrompt: '' },
      events: [],
      summary: summaryRequest(''),
      now: T0,
      state: null,
    });
    expect(outcome.kind === 'parsed' && outcome.summary).toMatchObject({ skipped: true });
  });

  it('escapes markup in tool text so its own XML stays valid', async () => {
    const [o] = await observations([
      toolEvent('Edit', {
        file_path: '/w/a.tsx',
        old_string: 'x',
        new_string: '<Button onClick={go}>Go & run</Button>',
      }),
    ]);
    expect(o!.facts.join(' ')).toContain('<Button onClick={go}>Go & run</Button>');
  });
});
