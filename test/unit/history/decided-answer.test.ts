/**
 * `answeredAlike`: whether an answer given again to a decided permission request is the
 * one the history records (the CLI then reports it applied, exit 0) or another (refused).
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/common/json.js';
import { answeredAlike } from '../../../src/history/decided.js';
import type { HistoryTimeline } from '../../../src/history/timeline-types.js';

type Ask = NonNullable<NonNullable<HistoryTimeline['toolCalls'][number]['permission']>['ask']>;

/** A timeline with one Write call whose ask `req-1` ended as `ask` says. */
function timelineWith(ask: Partial<Ask>): HistoryTimeline {
  return {
    status: 'RUNNING',
    dispatches: [],
    toolCalls: [
      {
        toolUseId: 'call-1',
        toolName: 'Write',
        input: { file_path: 'a.txt', content: 'x' },
        dispatches: [],
        permission: {
          policy: 'preset default',
          answer: 'ask',
          ask: {
            askedAt: 0,
            deadline: 1000,
            outcome: 'approved',
            requestId: 'req-1',
            timerEventId: 5,
            ...ask,
          },
        },
      },
    ],
  } as unknown as HistoryTimeline;
}

const ref = { requestId: 'req-1' };

describe('answeredAlike', () => {
  it('an approval with the same edited input (key order aside) is alike; none, or another input, is not', () => {
    const timeline = timelineWith({
      outcome: 'approved',
      updatedInput: { file_path: 'a.txt', content: 'edited' },
    });
    const allow = (updatedInput?: JsonObject) =>
      answeredAlike(timeline, ref, {
        behavior: 'allow',
        ...(updatedInput ? { updatedInput } : {}),
      });
    expect(allow({ content: 'edited', file_path: 'a.txt' })).toBe(true);
    expect(allow()).toBe(false);
    expect(allow({ file_path: 'a.txt', content: 'other' })).toBe(false);
    expect(answeredAlike(timeline, ref, { behavior: 'deny' })).toBe(false);
  });

  it('an approval with no input matches an approval recorded with none', () => {
    expect(answeredAlike(timelineWith({ outcome: 'approved' }), ref, { behavior: 'allow' })).toBe(
      true,
    );
  });

  it('a denial is alike with the same message and interrupt (absent and false the same)', () => {
    const timeline = timelineWith({ outcome: 'denied', message: 'not today', interrupt: true });
    const deny = (answer: { message?: string; interrupt?: boolean }) =>
      answeredAlike(timeline, ref, { behavior: 'deny', ...answer });
    expect(deny({ message: 'not today', interrupt: true })).toBe(true);
    expect(deny({ message: 'not today' })).toBe(false);
    expect(deny({ message: 'not now', interrupt: true })).toBe(false);
    expect(deny({ interrupt: true })).toBe(false);
    const plain = timelineWith({ outcome: 'denied' });
    expect(answeredAlike(plain, ref, { behavior: 'deny', interrupt: false })).toBe(true);
    expect(answeredAlike(plain, ref, { behavior: 'allow' })).toBe(false);
  });

  it('a request that expired, was cancelled, still waits or is unknown is never alike', () => {
    for (const outcome of ['expired', 'cancelled', 'waiting'] as const) {
      expect(answeredAlike(timelineWith({ outcome }), ref, { behavior: 'deny' })).toBe(false);
    }
    expect(
      answeredAlike(
        timelineWith({ outcome: 'approved' }),
        { requestId: 'other' },
        {
          behavior: 'allow',
        },
      ),
    ).toBe(false);
  });
});
