/**
 * The model step's retry waits (issue 19, item 4): a step that failed sets its own wait, 1 s
 * doubled per attempt, so the activity's retry policy (100 ms) only paces a step lost with its
 * worker; the 5th attempt's failure is final (lost workers may take the policy's 10);
 * cancellations and failures that are not retried pass untouched.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { stepRetryDelayMs, withStepBackoff } from '../../../activities/model-step.js';
import {
  MODEL_STEP_MAX_ATTEMPTS,
  MODEL_STEP_PROVIDER_ATTEMPTS,
} from '../../../src/common/activity-io.js';

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

  it("makes the 5th attempt's failure final, keeping its details (lost workers may retry more)", () => {
    const failure = ApplicationFailure.create({
      type: 'ProviderError',
      message: '503',
      details: [{ statusCode: 503, retryable: true }],
    });
    const out = withStepBackoff(failure, MODEL_STEP_PROVIDER_ATTEMPTS) as ApplicationFailure;
    expect(out.nonRetryable).toBe(true);
    expect(out.nextRetryDelay).toBeUndefined();
    expect(out.details).toEqual([{ statusCode: 503, retryable: true }]);
    const plain = withStepBackoff(new Error('reset'), 7) as ApplicationFailure;
    expect(plain.nonRetryable).toBe(true);
    expect(MODEL_STEP_MAX_ATTEMPTS).toBeGreaterThan(MODEL_STEP_PROVIDER_ATTEMPTS);
    expect((withStepBackoff(new Error('reset'), 4) as ApplicationFailure).nonRetryable).toBe(false);
  });

  it('copies the failure it is given (a model may throw one object at every attempt)', () => {
    const shared = ApplicationFailure.create({ type: 'ProviderError', message: '429' });
    const first = withStepBackoff(shared, 1) as ApplicationFailure;
    expect(first).not.toBe(shared);
    expect(shared.nextRetryDelay).toBeUndefined();
    expect(first.nextRetryDelay).toBe(1_000);
    expect((withStepBackoff(shared, 3) as ApplicationFailure).nextRetryDelay).toBe(4_000);
    // Its own wait is kept, but not past the 5th attempt.
    const own = ApplicationFailure.create({ message: 'later', nextRetryDelay: 50 });
    expect(
      (withStepBackoff(own, MODEL_STEP_PROVIDER_ATTEMPTS) as ApplicationFailure).nonRetryable,
    ).toBe(true);
  });

  it('leaves what a cancelled step threw as it is (an AbortError too)', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(withStepBackoff(abort, 1, true)).toBe(abort);
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
