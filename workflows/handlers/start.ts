/**
 * A session's start: SessionStart, once, in the session's first run, and the `ready`
 * Update that answers once it has run (with its failure, when it failed). Workflow code.
 *
 * @module
 */
import { allHandlersFinished, condition, isCancellation } from '@temporalio/workflow';
import { HookEvent } from '../../src/common/hook-events.js';
import { applySessionStart } from '../../src/common/hook-rules.js';
import { Updates } from '../../src/common/messages.js';
import type { SessionWorkflowResult } from '../../src/common/workflow-io.js';
import { dispatchEvent } from '../prompt/dispatch.js';
import { failureToSerialized, toFailure } from '../session/failures.js';
import { syncSearchAttributes } from '../session/search-attributes.js';
import { describeSession, type SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';

/** Register the `ready` Update: it answers once SessionStart has run. */
export function setReadyHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  setHandler(Updates.ready, async () => {
    await condition(() => state.status !== 'starting');
    state.readyAcked = true;
    if (state.startError) throw toFailure(state.startError);
    return describeSession(state);
  });
}

/**
 * Run SessionStart; a callback's `fail` decision or a failed dispatch is kept as
 * `state.startError`. Rethrows only cancellation.
 */
export async function runSessionStart(state: SessionState): Promise<void> {
  const { input } = state;
  try {
    const merged = await dispatchEvent(state, HookEvent.SessionStart, {
      isResume: input.isResume ?? false,
      ...(input.resumeSessionId !== undefined ? { resumeSessionId: input.resumeSessionId } : {}),
    });
    const decision = merged ? applySessionStart(merged) : { kind: 'ok' as const };
    if (decision.kind === 'fail') {
      state.startError = {
        name: 'HookError',
        code: 'SESSION_START_FAILED',
        message: decision.reason,
        event: HookEvent.SessionStart,
        ...(merged?.decidedBy !== undefined ? { callbackIndex: merged.decidedBy } : {}),
      };
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    state.startError = failureToSerialized(error);
  }
}

/** End a run whose SessionStart failed, once its client has read the failure (or a minute passed). */
export async function endFailedStart(state: SessionState): Promise<SessionWorkflowResult> {
  state.status = 'closed';
  await condition(() => state.readyAcked, '1 minute', {
    summary: 'waiting for the creating client to see the session open',
  });
  // A SessionStart callback that outlived its dispatch (a timeout) still runs: the run
  // stays open until it settles or its worker is lost, so the id cannot be started afresh
  // (running SessionStart again beside it) meanwhile. Fail-closed, as for any dispatch.
  if (state.pendingCleanups.size > 0) await condition(() => state.pendingCleanups.size === 0);
  await condition(allHandlersFinished);
  syncSearchAttributes(state);
  return {
    sessionId: state.input.sessionId,
    startError: state.startError,
    timeline: state.timeline,
  };
}
