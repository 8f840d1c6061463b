// `cairn admin health` text from a team's health answer: what an admin must act on is printed.
import { describe, expect, it } from 'vitest';
import { renderTeamHealth } from '../../src/commands/health';

describe('cairn admin health text', () => {
  it('says how many records the embedder skipped, so an admin knows they are found by keyword only', () => {
    const text = renderTeamHealth({ team: 't1', vectors: { skipped: 4 } });
    expect(text).toContain('vectors: 4 record(s) the embedder refused 3 times; search finds them by keyword only');
  });

  it('says nothing about vectors when none were skipped', () => {
    expect(renderTeamHealth({ team: 't1', vectors: { skipped: 0 } })).not.toContain('vectors:');
  });
});
