// What `cairn prime` extracts from a repository's text: outlines, commits, TODO lines — bounded, redacted, and
// never more of a file than short excerpts.
import { describe, expect, it } from 'vitest';
import {
  CAPS,
  commitNote,
  docNote,
  FIELD,
  firstParagraph,
  markdownHeadings,
  parseGitLog,
  pickDocs,
  RECORD,
  todoLines,
  todoNote,
} from '../../src/prime/extract';

// Built from parts, so no scanner takes this file for a leak.
const AWS = ['AKIA', 'Q3EGRQ7HXMZ4TN2K'].join('');
const GITHUB = ['ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');

const README = `# Widgets [![build](https://ci.example/badge.svg)](https://ci.example)

<p align="center">logo</p>

Widgets routes requests to **handlers** by path and caches the answers.
A second line of the same paragraph.

## Install
\`\`\`sh
# not a heading: inside a fence
npm i widgets
\`\`\`
## Usage
### The \`route()\` call of _my_ snake_case ###
Body text that is never sent.
`;

describe('markdown outlines', () => {
  it('reads ATX headings outside code fences, without their markup', () => {
    expect(markdownHeadings(README)).toEqual([
      { level: 1, text: 'Widgets build' },
      { level: 2, text: 'Install' },
      { level: 2, text: 'Usage' },
      { level: 3, text: 'The route() call of my snake_case' },
    ]);
  });

  it('takes the first prose paragraph, skipping badges, HTML and headings', () => {
    expect(firstParagraph(README)).toBe(
      'Widgets routes requests to handlers by path and caches the answers. A second line of the same paragraph.',
    );
  });

  it('makes one note of a doc: its outline and a short excerpt, never its body', () => {
    const note = docNote('README.md', README)!;
    expect(note).toMatchObject({ kind: 'docs', title: 'README.md: Widgets build', files: ['README.md'] });
    expect(note.text).toBe(
      [
        'Outline of README.md:',
        '- Widgets build',
        '  - Install',
        '  - Usage',
        '    - The route() call of my snake_case',
        'Starts: Widgets routes requests to handlers by path and caches the answers. A second line of the same paragraph.',
      ].join('\n'),
    );
    expect(note.text).not.toContain('never sent');
    expect(note.text).not.toContain('npm i');
    expect(docNote('notes.md', 'just text, no headings')).toBeNull();
  });

  it('caps headings per doc, each heading, the excerpt and the whole text, and redacts secrets in them', () => {
    const short = docNote('a.md', Array.from({ length: 50 }, (_, i) => `## Part ${i}`).join('\n'))!;
    expect(short.text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(CAPS.headingsPerDoc);
    expect(short.text).toContain('(+20 more headings)');
    const many = Array.from({ length: 50 }, (_, i) => `## Part ${i} ${'x'.repeat(300)}`).join('\n');
    const note = docNote('docs/big.md', `# Big with ${AWS}\n\nKey ${GITHUB} ${'y'.repeat(1000)}\n\n${many}`)!;
    const lines = note.text.split('\n');
    const shown = lines.filter((l) => l.trimStart().startsWith('- ')).length;
    expect(shown).toBeGreaterThan(10);
    expect(lines).toContain(`(+${51 - shown} more headings)`);
    for (const l of lines.filter((x) => x.trimStart().startsWith('- ')))
      expect(l.trim().length).toBeLessThanOrEqual(CAPS.headingChars + 2);
    expect(lines.find((l) => l.startsWith('Starts: '))!.length).toBeLessThanOrEqual(
      'Starts: '.length + CAPS.excerptChars,
    );
    expect(note.text.length).toBeLessThanOrEqual(CAPS.textChars);
    const all = JSON.stringify(note);
    expect(all).not.toContain(AWS);
    expect(all).not.toContain(GITHUB);
    expect(all).toContain('[REDACTED:aws-access-key]');
    expect(all).toContain('[REDACTED:github-token]');
  });

  it('picks README first, then root docs, then docs/ by depth, leaving out changelogs and deep or non-doc files', () => {
    const tracked = [
      'src/a.ts',
      'CHANGELOG.md',
      'docs/deep/er/x.md',
      'docs/guide/setup.md',
      'docs/api.md',
      'ARCHITECTURE.md',
      'README.md',
      'LICENSE.md',
      'pkg/README.md',
    ];
    expect(pickDocs(tracked)).toEqual(['README.md', 'ARCHITECTURE.md', 'docs/api.md', 'docs/guide/setup.md']);
    expect(pickDocs(Array.from({ length: 20 }, (_, i) => `docs/p${String(i).padStart(2, '0')}.md`))).toHaveLength(
      CAPS.docs,
    );
  });
});

describe('git history', () => {
  const log = [
    `${RECORD}1a2b3c4${FIELD}2026-11-02${FIELD}Add the widget cache\n\nsrc/cache.ts\nsrc/app.ts\n`,
    `${RECORD}5d6e7f8${FIELD}2026-11-01${FIELD}Rotate ${GITHUB} in CI\n\n.github/workflows/ci.yml\n`,
    `${RECORD}9a9a9a9${FIELD}2026-10-30${FIELD}Empty commit\n`,
    `${RECORD}not-a-hash${FIELD}x${FIELD}y\n`,
  ].join('');

  it('parses the log format into commits with their files', () => {
    expect(parseGitLog(log)).toEqual([
      { hash: '1a2b3c4', date: '2026-11-02', subject: 'Add the widget cache', files: ['src/cache.ts', 'src/app.ts'] },
      { hash: '5d6e7f8', date: '2026-11-01', subject: `Rotate ${GITHUB} in CI`, files: ['.github/workflows/ci.yml'] },
      { hash: '9a9a9a9', date: '2026-10-30', subject: 'Empty commit', files: [] },
    ]);
  });

  it('makes one note a commit: subject (redacted), date and touched files, capped', () => {
    const [a, b, c] = parseGitLog(log).map(commitNote);
    expect(a).toEqual({
      kind: 'commit',
      title: 'Add the widget cache',
      text: 'Commit 1a2b3c4 (2026-11-02): Add the widget cache. Touched: src/cache.ts, src/app.ts.',
      files: ['src/cache.ts', 'src/app.ts'],
    });
    expect(JSON.stringify(b)).not.toContain(GITHUB);
    expect(b!.title).toBe('Rotate [REDACTED:github-token] in CI');
    expect(c!.text).toBe('Commit 9a9a9a9 (2026-10-30): Empty commit.');
    const wide = commitNote({
      hash: 'abcdef0',
      date: '2026-01-01',
      subject: 's'.repeat(500),
      files: Array.from({ length: 30 }, (_, i) => `f${i}.ts`),
    });
    expect(wide.files).toHaveLength(CAPS.filesPerCommit);
    expect(wide.text).toContain('(+10 more)');
    expect(wide.title.length).toBeLessThanOrEqual(CAPS.subjectChars);
  });
});

describe('open TODOs', () => {
  it('keeps the marker and what follows in comments only, at most a few a file, skipping minified lines, prose, strings and words that only contain the marker', () => {
    const text = [
      'const a = 1; // TODO: evict by size',
      '# FIXME(ada) the retry loop spins',
      'function todoList() {} // not a marker: todoList',
      'Prose that mentions TODO lines is not one.',
      'const s = "TODO: inside a string, not after a comment opener";',
      '<!-- TODO(docs) add a diagram -->',
      `/* HACK: key ${AWS} hard-coded */`,
      `x=1;${'y'.repeat(500)} // TODO inside a minified line`,
      ...Array.from({ length: 6 }, (_, i) => `// XXX ${i}`),
    ].join('\n');
    const found = todoLines(text);
    expect(found.total).toBe(10);
    expect(found.items).toEqual([
      'TODO: evict by size',
      'FIXME(ada) the retry loop spins',
      'TODO(docs) add a diagram -->',
      'HACK: key [REDACTED:aws-access-key] hard-coded */',
      'XXX 0',
    ]);
    const note = todoNote('src/cache.ts', found)!;
    expect(note).toEqual({
      kind: 'todo',
      title: 'Open TODOs in src/cache.ts (10)',
      text: '- TODO: evict by size\n- FIXME(ada) the retry loop spins\n- TODO(docs) add a diagram -->\n- HACK: key [REDACTED:aws-access-key] hard-coded */\n- XXX 0\n(+5 more in this file)',
      files: ['src/cache.ts'],
    });
    expect(todoNote('a.ts', todoLines('nothing to do'))).toBeNull();
  });
});
