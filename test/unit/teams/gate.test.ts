// The server-side gate: excluded-project globs (claude-mem's rules and cases) and skipped tools.
import { describe, expect, it } from 'vitest';
import { isPathExcluded, parseGlobList } from '#shared/glob';
import { DEFAULT_SKIPPED_TOOLS, serverGate } from '../../../src/gate/gate';

const HOME = '/home/dev';

describe('excluded project globs', () => {
  const ex = (path: string, list: string) => isPathExcluded(path, parseGlobList(list), HOME);

  it('never excludes a blank path', () => {
    expect(ex('', '/tmp/*')).toBe(false);
    expect(ex('   ', '/tmp/*')).toBe(false);
  });

  it('matches an exact path and nothing else', () => {
    expect(ex('/tmp/secret', '/tmp/secret')).toBe(true);
    expect(ex('/tmp/public', '/tmp/secret')).toBe(false);
  });

  it('lets a single star match within one segment only', () => {
    expect(ex('/tmp/secret', '/tmp/*')).toBe(true);
    expect(ex('/tmp/anything', '/tmp/*')).toBe(true);
    expect(ex('/tmp/a/b', '/tmp/*')).toBe(false);
  });

  it('lets a double star match any depth', () => {
    expect(ex('/Users/test/kunden/client1/project', '/Users/*/kunden/**')).toBe(true);
    expect(ex('/Users/test/kunden/client1/project/deeper/still', '/Users/*/kunden/**')).toBe(true);
  });

  it('lets a question mark match exactly one character', () => {
    expect(ex('/tmp/a', '/tmp/?')).toBe(true);
    expect(ex('/tmp/ab', '/tmp/?')).toBe(false);
  });

  it('expands a tilde to the client home', () => {
    expect(ex(`${HOME}/secret`, '~/secret')).toBe(true);
    expect(ex(`${HOME}/projects/secret`, '~/projects/*')).toBe(true);
    expect(ex('/home/other/secret', '~/secret')).toBe(false);
  });

  it('lets a tilde match any usual home directory when the client home is unknown', () => {
    expect(isPathExcluded('/Users/ana/secret', ['~/secret'])).toBe(true);
    expect(isPathExcluded('/home/bo/secret', ['~/secret'])).toBe(true);
    expect(isPathExcluded('/srv/secret', ['~/secret'])).toBe(false);
  });

  it('checks every glob of a comma-separated list', () => {
    const list = '/tmp/*,~/kunden/*,/var/secret';
    expect(ex('/tmp/test', list)).toBe(true);
    expect(ex(`${HOME}/kunden/client`, list)).toBe(true);
    expect(ex('/var/secret', list)).toBe(true);
    expect(ex('/home/user/public', list)).toBe(false);
  });

  it('treats backslashes as slashes', () => {
    expect(ex('C:\\Users\\test\\secret', 'C:/Users/*/secret')).toBe(true);
  });

  it('does not match a directory that only contains the pattern as a substring', () => {
    expect(ex('/home/user/tmp', '/tmp/*,/var/tmp/*')).toBe(false);
  });

  it('matches a bare name against the last path segment', () => {
    expect(ex('/work/clients/acme-secret', 'acme-*')).toBe(true);
    expect(ex('/work/clients/acme-secret/src', 'acme-*')).toBe(false);
  });

  it('escapes regular-expression characters in globs', () => {
    expect(ex('/tmp/a+b', '/tmp/a+b')).toBe(true);
    expect(ex('/tmp/aab', '/tmp/a+b')).toBe(false);
    expect(ex('/tmp/x.y', '/tmp/x.y')).toBe(true);
    expect(ex('/tmp/xzy', '/tmp/x.y')).toBe(false);
  });
});

describe('serverGate', () => {
  const obs = (tool: string, extra: Record<string, unknown> = {}) => ({
    kind: 'observation' as const,
    project: 'github.com/acme/widgets',
    cwd: '/home/dev/widgets',
    tool_name: tool,
    home: HOME,
    ...extra,
  });

  it('skips the default tool list when the team has not set one', () => {
    for (const tool of DEFAULT_SKIPPED_TOOLS)
      expect(serverGate({}, obs(tool))).toEqual({ allow: false, reason: 'tool_excluded' });
    expect(serverGate({}, obs('Bash'))).toEqual({ allow: true });
  });

  it('uses the team list instead of the default when set', () => {
    expect(serverGate({ skipped_tools: ['Bash'] }, obs('Bash'))).toEqual({ allow: false, reason: 'tool_excluded' });
    expect(serverGate({ skipped_tools: ['Bash'] }, obs('TodoWrite'))).toEqual({ allow: true });
    expect(serverGate({ skipped_tools: [] }, obs('TodoWrite'))).toEqual({ allow: true });
  });

  it('refuses every kind of event from an excluded working directory', () => {
    const settings = { excluded_projects: ['~/kunden/**'] };
    for (const kind of ['init', 'observation', 'summarize', 'end'] as const) {
      expect(
        serverGate(settings, { kind, project: 'local/c1', cwd: '/home/dev/kunden/c1', home: HOME, tool_name: 'Bash' }),
      ).toEqual({
        allow: false,
        reason: 'project_excluded',
      });
    }
  });

  it('refuses events whose project key matches an excluded glob', () => {
    expect(serverGate({ excluded_projects: ['github.com/acme/*'] }, obs('Bash'))).toEqual({
      allow: false,
      reason: 'project_excluded',
    });
    expect(serverGate({ excluded_projects: ['github.com/other/*'] }, obs('Bash'))).toEqual({ allow: true });
  });

  it('skips file tools that touch session-memory files, whether the input is an object or JSON text', () => {
    expect(serverGate({}, obs('Edit', { tool_input: { file_path: '/x/session-memory/notes.md' } }))).toEqual({
      allow: false,
      reason: 'session_memory_meta',
    });
    expect(
      serverGate(
        {},
        obs('NotebookEdit', { tool_input: JSON.stringify({ notebook_path: '/x/session-memory/a.ipynb' }) }),
      ),
    ).toMatchObject({ allow: false });
    expect(serverGate({}, obs('Edit', { tool_input: { file_path: '/x/src/app.ts' } }))).toEqual({ allow: true });
    expect(serverGate({}, obs('Bash', { tool_input: { command: 'cat session-memory/x' } }))).toEqual({ allow: true });
  });

  it('lets prompts and summaries through regardless of the tool list', () => {
    expect(serverGate({ skipped_tools: ['Bash'] }, { kind: 'init', project: 'p', cwd: '/w/p' })).toEqual({
      allow: true,
    });
  });
});
