import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { startRefused } from '../../../src/client/start-session.js';
import { EngineError } from '../../../src/common/errors.js';

/** A ServiceError as the client throws it for a failed StartWorkflowExecution. */
function startError(code: number, details: string): ServiceError {
  return new ServiceError('Failed to start Workflow', {
    cause: Object.assign(new Error(details), { code, details }),
  });
}

describe('startRefused', () => {
  it('a start the server refused outright says it was not started, with the status', () => {
    const error = startRefused(startError(3, 'WorkflowId length exceeds limit.'), 's1');
    expect(error).toBeInstanceOf(EngineError);
    expect(error.message).toBe(
      "Session 's1' was not started: the Temporal server refused its workflow's start " +
        '(INVALID_ARGUMENT: WorkflowId length exceeds limit.).',
    );
  });

  it('an unavailable server or a deadline says the start may have gone through', () => {
    for (const [code, status] of [
      [14, 'UNAVAILABLE'],
      [4, 'DEADLINE_EXCEEDED'],
    ] as const) {
      const error = startRefused(startError(code, 'no answer'), 's1');
      expect(error).toBeInstanceOf(EngineError);
      expect(error.message).toMatch(new RegExp(`^Session 's1' may not have started: .*${status}`));
      expect(error.message).toMatch(/attaches if it did/);
    }
  });
});
