/**
 * The session's `handoff` Update: its next activities run on another task queue (another
 * worker fleet). Workflow code.
 *
 * @module
 */
import { Updates } from '../../src/common/messages.js';
import { cleanupPendingFailure } from '../prompt/dispatch-outcome.js';
import { sessionClosedFailure, toFailure } from '../session/failures.js';
import { describeSession, isClosing, type SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';

/** Register the `handoff` Update. */
export function setHandoffHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  setHandler(Updates.handoff, (request) => {
    state.activitySeq++;
    if (typeof request?.taskQueue !== 'string' || request.taskQueue === '') {
      throw toFailure({
        name: 'ConfigError',
        code: 'CONFIG_INVALID',
        message: 'handoff: taskQueue must be a non-empty string',
      });
    }
    if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
    if (isClosing(state)) throw sessionClosedFailure(state.input.sessionId);
    state.taskQueue = request.taskQueue;
    return describeSession(state);
  });
}
