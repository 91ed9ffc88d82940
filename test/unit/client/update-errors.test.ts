/**
 * How a refused Update reads and whether it is retried: Temporal's client wraps the server's
 * refusal of the call in a ServiceError that only says `Workflow Update failed`.
 */
import {
  ServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../src/common/errors.js';
import {
  isServerDeadline,
  isTransientTaskFailure,
  toSdkError,
} from '../../../src/client/update-calls.js';

/** A gRPC error as @grpc/grpc-js gives it: `<code> <NAME>: <details>`. */
function grpcError(code: number, name: string, details: string): Error {
  return Object.assign(new Error(`${code} ${name}: ${details}`), { code, details, metadata: {} });
}

const taskFailure = () =>
  new ServiceError('Workflow Update failed', {
    cause: grpcError(
      9,
      'FAILED_PRECONDITION',
      'Unable to perform workflow execution update due to unexpected workflow task failure.',
    ),
  });

describe('a refused Update', () => {
  it("says the server's reason, not only 'Workflow Update failed'", () => {
    const error = toSdkError(taskFailure(), 's-1');
    expect(error).toBeInstanceOf(EngineError);
    expect(error.message).toBe(
      'Workflow Update failed: Unable to perform workflow execution update due to unexpected workflow task failure.',
    );
  });

  it('a workflow task in failed state and an aborted Update are retried, through an SDK error too', () => {
    expect(isTransientTaskFailure(taskFailure())).toBe(true);
    expect(isTransientTaskFailure(toSdkError(taskFailure(), 's-1'))).toBe(true);
    const aborted = new ServiceError('Workflow Update failed', {
      cause: grpcError(14, 'UNAVAILABLE', 'workflow update was aborted'),
    });
    expect(isTransientTaskFailure(aborted)).toBe(true);
    expect(toSdkError(aborted, 's-1').message).toBe(
      'Workflow Update failed: workflow update was aborted',
    );
  });

  it('an Update aborted because its run closed, or failed by its handler, is not retried', () => {
    const closing = new ServiceError('Workflow Update failed', {
      cause: grpcError(5, 'NOT_FOUND', 'workflow update was aborted by closing workflow'),
    });
    expect(isTransientTaskFailure(closing)).toBe(false);
    const failed = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      ApplicationFailure.create({ message: 'no such request' }),
    );
    expect(isTransientTaskFailure(failed)).toBe(false);
    expect(toSdkError(failed, 's-1').message).toBe('no such request');
  });
});

describe('an Update call past a deadline', () => {
  const timedOut = (details: string) =>
    new WorkflowUpdateRPCTimeoutOrCancelledError(details, {
      cause: grpcError(4, 'DEADLINE_EXCEEDED', details),
    });

  it("the server's own deadline (the workflow had not taken the Update yet) is waited on", () => {
    expect(isServerDeadline(timedOut('context deadline exceeded'))).toBe(true);
  });

  it("the caller's deadline and a cancelled call are not", () => {
    expect(isServerDeadline(timedOut('Deadline exceeded after 8.002s'))).toBe(false);
    const cancelled = new WorkflowUpdateRPCTimeoutOrCancelledError('Cancelled on client', {
      cause: grpcError(1, 'CANCELLED', 'Cancelled on client'),
    });
    expect(isServerDeadline(cancelled)).toBe(false);
  });
});
