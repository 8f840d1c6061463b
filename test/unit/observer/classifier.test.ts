// Output classes, quota and auth-failure prose, and log previews.
import { describe, expect, it } from 'vitest';
import { classifyOutput, isAuthFailureText, isQuotaText, previewOutput } from '../../../src/observer/classifier';

describe('classifyOutput', () => {
  it.each([
    ['<observation><type>discovery</type><title>A real finding</title></observation>', 'xml'],
    ['<summary><request>do x</request></summary>', 'xml'],
    ['<skip_summary reason="nothing to do"/>', 'xml'],
    ['session exhausted <observation></observation>', 'xml'],
    ['', 'idle'],
    ['   \n\t  ', 'idle'],
    [undefined, 'idle'],
    [null, 'idle'],
    ['Skipping — repeated log scan with no new findings.', 'prose'],
    ['This session has been exhausted, I cannot continue.', 'prose'],
    ['Error: prompt is too long for this model.', 'prose'],
    ['I hit the context window, so there is no XML.', 'prose'],
  ])('classifies %j as %s', (raw, expected) => {
    expect(classifyOutput(raw)).toBe(expected);
  });
});

describe('isQuotaText', () => {
  it.each([
    'Claude usage limit reached. Your weekly limit will reset soon.',
    'Your subscription quota has been exhausted. Please try again after it resets.',
    'You have reached your weekly usage limit.',
    'Your credit balance is too low to access the API.',
  ])('recognises %j as an exhausted allowance', (raw) => {
    expect(isQuotaText(raw)).toBe(true);
  });

  it.each([
    'I hit the context window and cannot produce valid XML.',
    'No observations to record.',
    '<observation><title>Usage limit reached in billing module</title></observation>',
    '',
  ])('does not mistake %j for one', (raw) => {
    expect(isQuotaText(raw)).toBe(false);
  });
});

describe('isAuthFailureText', () => {
  it.each([
    'Failed to authenticate. API Error: 401',
    'Authentication failed with HTTP 403.',
    'Authentication failure; please run /login.',
    'Please run /login to authenticate again.',
    'Authentication required, run /login to continue.',
    '401 Unauthorized',
    '403 Forbidden',
    'Status: 401',
    'Request failed with 403',
    'Invalid API key provided.',
  ])('recognises %j as refused credentials', (raw) => {
    expect(isAuthFailureText(raw)).toBe(true);
  });

  it.each([
    '<observation><title>HTTP 401</title></observation>',
    'The request returned 500 and produced no XML.',
    'No observations to record.',
    'Please run /login in the observed project instructions.',
    'The project authentication guide says to run /login before testing.',
    'The token validation rejects invalid input.',
  ])('does not mistake %j for it', (raw) => {
    expect(isAuthFailureText(raw)).toBe(false);
  });
});

describe('previewOutput', () => {
  it('collapses whitespace', () => {
    expect(previewOutput('  hello\n\n  world  ')).toBe('hello world');
  });

  it('cuts long text and says how much was left out', () => {
    const p = previewOutput('x'.repeat(300), 50);
    expect(p.startsWith('x'.repeat(50))).toBe(true);
    expect(p).toContain('+250 chars');
  });

  it('describes values that are not text', () => {
    expect(previewOutput(42)).toContain('non-string');
  });
});
