/**
 * The model step's retry waits (issue 19, item 4): a step that failed sets its own wait, 1 s
 * doubled per attempt, so the activity's retry policy (100 ms) only paces a step lost with its
 * worker; cancellations and failures that are not retried pass untouched.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { stepRetryDelayMs, withStepBackoff } from '../../activities/model-step.js';

describe('stepRetryDelayMs', () => {
  it('is 1 s, doubled per attempt, at most 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(stepRetryDelayMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    expect(stepRetryDelayMs(0)).toBe(1_000);
  });
});

describe('withStepBackoff', () => {
  it('gives a plain error the wait of its attempt, keeping its type, message and stack', () => {
    const error = new TypeError('socket hang up');
    const failure = withStepBackoff(error, 3) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.nextRetryDelay).toBe(4_000);
    expect(failure.type).toBe('TypeError');
    expect(failure.message).toBe('socket hang up');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.stack).toBe(error.stack);
  });

  it('gives a retryable failure the wait, keeping its details', () => {
    const failure = ApplicationFailure.create({
      type: 'ProviderError',
      message: '503',
      details: [{ statusCode: 503 }],
    });
    const out = withStepBackoff(failure, 1) as ApplicationFailure;
    expect(out.nextRetryDelay).toBe(1_000);
    expect(out.type).toBe('ProviderError');
    expect(out.details).toEqual([{ statusCode: 503 }]);
  });

  it('leaves a cancellation, a failure not retried, and a wait already set as they are', () => {
    const cancelled = new CancelledFailure('aborted');
    expect(withStepBackoff(cancelled, 2)).toBe(cancelled);
    const final = ApplicationFailure.create({ message: '401', nonRetryable: true });
    expect(withStepBackoff(final, 2)).toBe(final);
    expect((final as ApplicationFailure).nextRetryDelay).toBeUndefined();
    const own = ApplicationFailure.create({ message: 'later', nextRetryDelay: 50 });
    expect((withStepBackoff(own, 2) as ApplicationFailure).nextRetryDelay).toBe(50);
  });
});
