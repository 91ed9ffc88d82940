/**
 * How a session ends: the `close` Update, and the paths no caller waits on (idle timeout,
 * cancellation from outside). Whichever path it takes, SessionEnd runs at most once: its
 * marker is recorded right before it is scheduled. Workflow code.
 *
 * @module
 */
import { holdsLeases, returnLeases } from '../prompt/shared-budget.js';
import { condition, log, setCurrentDetails, upsertMemo, uuid4 } from '@temporalio/workflow';
import { serializeError } from '../../src/common/errors.js';
import { HookEvent } from '../../src/common/hook-events.js';
import { Updates } from '../../src/common/messages.js';
import type { SessionEndReason } from '../../src/common/types.js';
import { abortCurrent } from './abort.js';
import { cleanupPendingFailure } from '../prompt/dispatch-outcome.js';
import { dispatchEvent } from '../prompt/dispatch.js';
import type { CloseAttempt, SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';

/**
 * End the session once. Waits out any callback still cleaning up first (the paths that
 * end a session without a caller: idle timeout, cancellation), so the marker is only ever
 * recorded right before SessionEnd is really scheduled, in the same workflow task.
 */
async function endSession(
  state: SessionState,
  reason: SessionEndReason,
): Promise<{ ran: boolean }> {
  if (state.endMarker) return { ran: false };
  await condition(() => state.pendingCleanups.size === 0);
  state.endMarker = { reason, at: Date.now() };
  upsertMemo({ sessionEndMarker: state.endMarker });
  setCurrentDetails(`closing (${reason}): SessionEnd`);
  const merged = await dispatchEvent(state, HookEvent.SessionEnd, { reason });
  return { ran: merged !== undefined };
}

/** End the session on a path no caller waits on (idle timeout, outside cancellation). */
export async function endWithoutCaller(
  state: SessionState,
  reason: SessionEndReason,
): Promise<void> {
  state.status = 'closing';
  try {
    await endSession(state, reason);
  } catch (error) {
    log.warn(`SessionEnd failed (${reason})`, { error: serializeError(error) });
  }
  state.endReason = reason;
  state.status = 'closed';
}

/** Register the `close` Update. */
export function setCloseHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  const { input } = state;
  setHandler(Updates.close, async () => {
    state.activitySeq++;
    if (state.status === 'closed') return { closedNow: false, sessionEndRan: false };
    await condition(() => state.status !== 'starting');
    // A close arriving while another runs shares its outcome.
    if (state.closeInFlight) {
      const attempt = state.closeInFlight;
      await condition(() => attempt.done);
      if ('error' in attempt) throw attempt.error;
      return { closedNow: false, sessionEndRan: false };
    }
    if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
    const attempt: CloseAttempt = { done: false };
    state.closeInFlight = attempt;
    state.status = 'closing';
    // No rollover now: the session ends in this run.
    state.rolloverScope?.cancel();
    try {
      // Stop the running prompt (its send() resolves as aborted with a SessionClosedError).
      await abortCurrent(state, {
        abortId: `close:${uuid4()}`,
        reason: {
          name: 'SessionClosedError',
          code: 'SESSION_CLOSED',
          message: `Session '${input.sessionId}' is closing`,
        },
      });
      await condition(() => state.current === undefined && state.serving === state.nextTicket);
      // Stopping the prompt may have left a callback cleaning up: fail-closed applies.
      if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
      const { ran } = await endSession(state, 'other');
      // Shared budgets have their leases back before close() answers.
      if (holdsLeases(state)) await returnLeases(state, 'all');
      state.endReason ??= 'other';
      state.status = 'closed';
      return { closedNow: true, sessionEndRan: ran };
    } catch (error) {
      // SessionEnd failed or timed out (close() rejects; the marker stays and the next close()
      // closes without calling it again), or a cleanup is pending: the session stays open.
      state.status = 'open';
      attempt.error = error;
      throw error;
    } finally {
      attempt.done = true;
      state.closeInFlight = undefined;
    }
  });
}
