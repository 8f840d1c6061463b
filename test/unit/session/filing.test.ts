// The pure filing rule: which prompt an event belongs to.
import { describe, expect, it } from 'vitest';
import { fileEvent, promptAt, type PromptMark } from '../../../src/session/filing';

const p = (promptNumber: number, occurredAt: number, over: Partial<PromptMark> = {}): PromptMark => ({
  promptNumber,
  occurredAt,
  promptId: null,
  clientSeq: null,
  private: false,
  ...over,
});
const e = (occurredAt: number, over: { promptId?: string; clientSeq?: number } = {}) => ({
  occurredAt,
  promptId: over.promptId ?? null,
  clientSeq: over.clientSeq ?? null,
});

describe('filing an event under its prompt', () => {
  it('takes the latest prompt that started by the event time, whatever order the prompts arrived in', () => {
    const prompts = [p(1, 100), p(2, 300), p(3, 200)];
    expect(promptAt(prompts, e(250))?.promptNumber).toBe(3);
    expect(promptAt(prompts, e(350))?.promptNumber).toBe(2);
    expect(promptAt(prompts, e(50))).toBeNull();
  });

  it('breaks a tie in time with the client counter, and counts a prompt first when either has none', () => {
    const prompts = [p(1, 100, { clientSeq: 1 }), p(2, 200, { clientSeq: 5 })];
    expect(promptAt(prompts, e(200, { clientSeq: 4 }))?.promptNumber).toBe(1);
    expect(promptAt(prompts, e(200, { clientSeq: 6 }))?.promptNumber).toBe(2);
    expect(promptAt(prompts, e(200))?.promptNumber).toBe(2);
  });

  it('follows the prompt id over the time when that prompt is known', () => {
    const prompts = [p(1, 100, { promptId: 'a' }), p(2, 200, { promptId: 'b' })];
    expect(fileEvent(prompts, e(250, { promptId: 'a' }))).toEqual({ kind: 'prompt', prompt: prompts[0] });
  });

  it('waits for a prompt id not seen yet from a client that sends ids, and files by time for one that does not', () => {
    expect(fileEvent([p(1, 100, { promptId: 'a' })], e(250, { promptId: 'c' }))).toEqual({ kind: 'wait' });
    expect(fileEvent([], e(250, { promptId: 'c' }))).toEqual({ kind: 'wait' });
    const old = [p(1, 100)];
    expect(fileEvent(old, e(250, { promptId: 'c' }))).toEqual({ kind: 'prompt', prompt: old[0] });
  });
});
