// Tag stripping, prompt gates and field truncation (pure helpers shared with the hooks client).
import { describe, expect, it } from 'vitest';
import { isFullyPrivate, isTaskNotificationOnly, stripMemoryTags } from '#shared/tags';
import { serializeField, truncateField } from '#shared/truncate';

describe('stripMemoryTags', () => {
  it.each([
    ['before <private>hidden</private> after', 'before  after'],
    ['a <cairn-context>old memory</cairn-context> b', 'a  b'],
    ['<private>x</private> mid <cairn-context>y</cairn-context> end', 'mid  end'],
    ['keep <persisted-output>big blob</persisted-output> this', 'keep  this'],
    ['<private>one</private> middle <private>two</private> end', 'middle  end'],
    ['<cairn-context>1</cairn-context><cairn-context>2</cairn-context> rest', 'rest'],
    ['<private>all of it</private>', ''],
    ['', ''],
    ['nothing to strip', 'nothing to strip'],
    ['<private>a</private>   <cairn-context>b</cairn-context>', ''],
    ['line1\n<private>gone</private>\nline2', 'line1\n\nline2'],
    ['start\n<private>\nmulti\nline\n</private>\nfinish', 'start\n\nfinish'],
    ['user <system_instruction>do this</system_instruction> text', 'user  text'],
    ['user <system-instruction>do this</system-instruction> text', 'user  text'],
    ['<system_instruction>u</system_instruction> mid <system-instruction>h</system-instruction> end', 'mid  end'],
    ['user <system-reminder>CLAUDE.md says</system-reminder> text', 'user  text'],
    ['<system-reminder>r</system-reminder> pub <private>s</private> <cairn-context>c</cairn-context> end', 'pub   end'],
    ['<private>password123</private> Please help me', 'Please help me'],
  ])('turns %j into %j', (input, expected) => {
    expect(stripMemoryTags(input)).toBe(expected);
  });

  it('removes an outer block whole even when it contains another memory tag', () => {
    const text =
      'before\n<system-reminder>\nContents of CLAUDE.md:\n<cairn-context>\n# Recent\n- item\n</cairn-context>\n</system-reminder>\nafter';
    expect(stripMemoryTags(text)).toBe('before\n\nafter');
  });

  it('accepts attributes and any letter case on the tags', () => {
    expect(stripMemoryTags('a <PRIVATE reason="pw">secret</PRIVATE> b')).toBe('a  b');
  });

  it('does not mistake a longer tag name for a memory tag', () => {
    expect(stripMemoryTags('<private-notes>kept</private-notes>')).toBe('<private-notes>kept</private-notes>');
  });

  // How fast it is on hostile input (900 KB blocks, 100,000 unclosed tags) is measured in bench/hostile.bench.mjs.
  it('strips every one of many blocks and one huge block', () => {
    const many = Array.from({ length: 150 }, (_, i) => `<private>s${i}</private> p${i}`).join(' ');
    const out = stripMemoryTags(many);
    expect(out).not.toContain('<private>');
    expect(out).not.toMatch(/\bs\d+\b/);
    expect(out.match(/\bp\d+\b/g)).toHaveLength(150);
    expect(stripMemoryTags(`<private>${'x'.repeat(10_000)}</private> keep this`)).toBe('keep this');
  });

  it('strips inside serialised JSON without breaking it', () => {
    const json = JSON.stringify({
      file_path: '/p',
      content: '<private>secret</private> public',
      nested: { inner: '<cairn-context>c</cairn-context> visible' },
    });
    const parsed = JSON.parse(stripMemoryTags(json)) as { content: string; nested: { inner: string } };
    expect(parsed.content).toBe(' public');
    expect(parsed.nested.inner).toBe(' visible');
    expect(stripMemoryTags('{}')).toBe('{}');
  });
});

describe('isFullyPrivate', () => {
  it('is true only when there was text and none is left after stripping', () => {
    expect(isFullyPrivate('<private>all</private>')).toBe(true);
    expect(isFullyPrivate('  <private>x</private>\n\t<private>y</private>  ')).toBe(true);
    expect(isFullyPrivate('<private>pw</private> fix the bug')).toBe(false);
    expect(isFullyPrivate('')).toBe(false);
    expect(isFullyPrivate('plain')).toBe(false);
  });
});

describe('isTaskNotificationOnly', () => {
  it.each([
    ['<task-notification>agent done</task-notification>', true],
    ['<task-notification></task-notification>', true],
    ['\n  <task-notification>x</task-notification>  \n', true],
    ['<task-notification>\nline 1\nline 2\n</task-notification>', true],
    ['<task-notification data-id="42">x</task-notification>', true],
    ['', false],
    ['<task-notification>oops', false],
    ['hi <task-notification>x</task-notification> more', false],
    ['<private>x</private>', false],
    ['<system-reminder>x</system-reminder>', false],
    ['<task-notification>a</task-notification> text <task-notification>b</task-notification>', false],
    ['<task-notification>a</task-notification><task-notification>b</task-notification>', false],
  ])('says %j is a lone notification: %s', (input, expected) => {
    expect(isTaskNotificationOnly(input)).toBe(expected);
  });

  it('refuses payloads over 256 KiB', () => {
    expect(isTaskNotificationOnly(`<task-notification>${'x'.repeat(300 * 1024)}</task-notification>`)).toBe(false);
  });
});

describe('truncateField', () => {
  it('keeps head and tail sentinels of a 60,000-char field and stays far below 40,000 chars', () => {
    const raw = `HEAD_SENTINEL${'A'.repeat(60_000)}TAIL_SENTINEL`;
    const out = truncateField(raw);
    expect(out.startsWith('HEAD_SENTINEL')).toBe(true);
    expect(out.endsWith('TAIL_SENTINEL')).toBe(true);
    expect(out).toContain(
      `<elided chars="${raw.length - 9_600 - 4_800}" original_size_chars="${raw.length}" reason="oversize"/>`,
    );
    expect(out.length).toBeLessThan(16_000);
  });

  it('leaves a field within the budget untouched', () => {
    expect(truncateField('short')).toBe('short');
    expect(truncateField('x'.repeat(16_000))).toBe('x'.repeat(16_000));
  });

  it('never splits a surrogate pair at the cut', () => {
    const out = truncateField('😀'.repeat(20), 11);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(out).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});

describe('serializeField', () => {
  it('pretty-prints objects, lists and JSON strings, keeps other strings and maps undefined to empty', () => {
    expect(serializeField({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(serializeField([1, 2])).toBe('[\n  1,\n  2\n]');
    expect(serializeField('{"cmd":"pwd"}')).toBe('{\n  "cmd": "pwd"\n}');
    expect(serializeField('plain text')).toBe('plain text');
    expect(serializeField('{not json')).toBe('{not json');
    expect(serializeField(undefined)).toBe('');
    expect(serializeField(null)).toBe('null');
  });
});
