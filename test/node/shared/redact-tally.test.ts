// The shared redaction counts what it replaced, by kind, and counts nothing it leaves or already redacted.
import { describe, expect, it } from 'vitest';
import { redact, tallied, type RedactionTally } from '#shared/redact';

const GITHUB = ['ghp_', 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2'].join('');

describe('redaction tally', () => {
  it('counts each replaced secret under its kind and never the value', () => {
    const tally: RedactionTally = {};
    const out = redact(`token one ${GITHUB} and again ${GITHUB}; DB_PASSWORD=hunter2hunter2`, tally);
    expect(out).not.toContain(GITHUB);
    expect(tally).toEqual({ 'github-token': 2, assignment: 1 });
    expect(JSON.stringify(tally)).not.toContain('hunter2');
  });

  it('counts nothing for ordinary text, a git sha, or text that is already redacted', () => {
    const tally: RedactionTally = {};
    redact('Fixed the cache key in src/cache.ts at 9fceb02d0ae598e95dc970b74767f19372d61af8', tally);
    redact(redact(`token ${GITHUB} and password: "abcdefgh12"`), tally);
    expect(tallied(tally)).toBe(false);
  });
});
