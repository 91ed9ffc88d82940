/**
 * How a hook dispatch ended, seen from the workflow: the fail-closed refusal, the activity's
 * outcome or failure recorded on the dispatch's timeline entry and turned into the merged
 * result or the session's failure, and the wait for a callback that outlived its dispatch.
 * {@link dispatchEvent} and the inline dispatches of `dispatch.ts` share it.
 *
 * @module
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  TimeoutFailure,
  isCancellation,
  log,
} from '@temporalio/workflow';
import {
  HOOK_DISPATCH_LOST_TYPE,
  type HookDispatchOutcome,
  type CleanupHandle,
} from '../../src/common/activity-io.js';
import type { TimelineEntry } from '../../src/common/workflow-io.js';
import {
  clipErrorText,
  describeHookFailure,
  hookErrorRecord,
  messageOf,
  type SerializedError,
} from '../../src/common/errors.js';
import type { HookEvent } from '../../src/common/hook-events.js';
import { mergeHookOutputs, type MergedHookResult } from '../../src/common/hook-rules.js';
import { awaitHookSettledActivity } from '../activity-options.js';
import { hookFailure, toFailure } from '../session/failures.js';
import { isRefusedEverywhere } from '../session/version-refusal.js';
import type { DispatchState } from './dispatch.js';

/** The failure a dispatch refused for fail-closed raises; `close()` and handoff raise it too. */
export function cleanupPendingFailure(state: DispatchState) {
  return hookFailure(
    'HOOK_CLEANUP_PENDING',
    `A hook callback of this session is still cleaning up after being cancelled ` +
      `(${state.pendingCleanups.size} pending); the session is fail-closed until it settles`,
  );
}

/** Fail-closed: no dispatch while a callback of the session is still cleaning up. */
export function refuseWhileCleaningUp(
  state: DispatchState,
  entry: TimelineEntry,
  event: HookEvent,
): void {
  if (state.pendingCleanups.size > 0) {
    entry.outcome = 'refused';
    // No activity runs, so no worker logs it: the workflow does.
    throw failed(state, entry, event, cleanupPendingFailure(state), true);
  }
}

/**
 * Record on `entry` how the dispatch's activity failed, and return what to throw: a
 * cancellation (abort) as it is, anything else as the session's failure.
 */
export function dispatchFailure(
  state: DispatchState,
  entry: TimelineEntry,
  event: HookEvent,
  error: unknown,
): unknown {
  entry.durationMs = Date.now() - entry.startedAt;
  if (isRefusedEverywhere(error)) {
    entry.outcome = 'refused';
    entry.reason = clipErrorText(error.message);
    // Refused by every worker that took it: no callback ran, so the workflow logs it.
    return failed(state, entry, event, error, true);
  }
  if (isCancellation(error)) {
    entry.outcome = 'cancelled';
    const handle = cleanupHandleOf(error);
    if (handle && !handle.settled) watchCleanup(state, entry, handle);
    return error;
  }
  const lost = lostWorkerOf(error);
  if (lost !== undefined) {
    entry.outcome = 'worker_lost';
    entry.reason = `the worker running the dispatch was lost (${lost})`;
    // The worker that would have logged it is gone: the workflow does.
    return failed(
      state,
      entry,
      event,
      hookFailure('HOOK_WORKER_LOST', `Hook ${event} was lost with its worker: ${entry.reason}`, {
        event,
      }),
      true,
    );
  }
  entry.outcome = 'error';
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  entry.reason = clipErrorText(cause?.message ?? messageOf(error));
  return failed(
    state,
    entry,
    event,
    hookFailure('HOOK_CALLBACK_FAILED', `Hook ${event} dispatch failed: ${entry.reason}`, {
      event,
    }),
  );
}

/**
 * How the dispatch's worker was lost, if it was: the timeout of its last attempt (each lost
 * before its callbacks began), or an attempt that found an earlier one had begun them
 * ({@link HOOK_DISPATCH_LOST_TYPE}: that one's heartbeats stopped).
 */
function lostWorkerOf(error: unknown): string | undefined {
  if (!(error instanceof ActivityFailure)) return undefined;
  const { cause } = error;
  if (cause instanceof TimeoutFailure) return String(cause.timeoutType);
  if (cause instanceof ApplicationFailure && cause.type === HOOK_DISPATCH_LOST_TYPE) {
    return 'its callbacks began, then its heartbeats stopped';
  }
  return undefined;
}

/**
 * Record the activity's outcome on `entry`: the merged outputs of callbacks that completed.
 * @throws ApplicationFailure for a callback that threw or returned a malformed output, or a
 *   dispatch over its budget.
 */
export function outcomeResult(
  state: DispatchState,
  entry: TimelineEntry,
  event: HookEvent,
  outcome: HookDispatchOutcome,
  budgetMs: number,
): MergedHookResult {
  entry.durationMs = outcome.durationMs;
  entry.callbackCount = outcome.callbackCount;
  switch (outcome.status) {
    case 'completed': {
      const merged = mergeHookOutputs(outcome.outputs);
      entry.outcome = merged.action;
      if (merged.decidedBy !== undefined) entry.decidedBy = merged.decidedBy;
      if (merged.reason !== undefined) entry.reason = clipErrorText(merged.reason);
      return merged;
    }
    case 'error':
      entry.outcome = 'error';
      entry.decidedBy = outcome.callbackIndex;
      entry.reason = clipErrorText(outcome.error.message);
      throw failed(
        state,
        entry,
        event,
        toFailure({ ...outcome.error, event, callbackIndex: outcome.callbackIndex }),
      );
    case 'timeout':
      entry.outcome = 'timeout';
      entry.reason = `Hook ${event} exceeded ${budgetMs}ms`;
      if (!outcome.settled) watchCleanup(state, entry, outcome);
      throw failed(
        state,
        entry,
        event,
        hookFailure('HOOK_TIMEOUT', entry.reason, {
          event,
          timeoutMs: budgetMs,
          ...(outcome.callbackIndex !== undefined ? { callbackIndex: outcome.callbackIndex } : {}),
        }),
      );
  }
}

/**
 * Keep how the dispatch failed on its timeline entry, and hand the failure on. The activity
 * logs the failures it reports (a callback threw, a malformed output, a timeout); `log`
 * says this one ran no callback on a live worker, so the workflow logs it (on replay
 * Temporal drops workflow logs, so it is logged once).
 */
function failed(
  state: DispatchState,
  entry: TimelineEntry,
  event: HookEvent,
  failure: ApplicationFailure,
  logIt = false,
): ApplicationFailure {
  const detail = failure.details?.[0] as SerializedError | undefined;
  entry.error = hookErrorRecord(
    event,
    detail ?? { name: failure.type ?? 'HookError', message: failure.message },
  );
  if (logIt) {
    const line = describeHookFailure(entry.error, {
      agentName: state.input.agentName,
      sessionId: state.input.sessionId,
      ...(entry.toolName !== undefined ? { toolName: entry.toolName } : {}),
      ...(entry.toolUseId !== undefined ? { toolUseId: entry.toolUseId } : {}),
    });
    log.warn(line.message, line.meta);
  }
  return failure;
}

function cleanupHandleOf(error: unknown): CleanupHandle | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof CancelledFailure)) return undefined;
  const detail = cause.details[0] as Partial<CleanupHandle> | undefined;
  if (!detail || typeof detail.cleanupQueue !== 'string' || typeof detail.dispatchId !== 'string') {
    return undefined;
  }
  return {
    settled: detail.settled === true,
    cleanupQueue: detail.cleanupQueue,
    dispatchId: detail.dispatchId,
  };
}

/**
 * Hold the session fail-closed until the callback settles on the worker that holds it, or
 * that worker is gone. Runs outside the prompt's scope, so an abort does not end the wait.
 * A run that continues as new hands its pending cleanups on; the next run watches them again.
 */
export function watchCleanup(
  state: DispatchState,
  entry: TimelineEntry,
  handle: CleanupHandle,
): void {
  entry.cleanup = 'pending';
  state.pendingCleanups.set(handle.dispatchId, { entry, handle });
  void CancellationScope.nonCancellable(async () => {
    try {
      await awaitHookSettledActivity(
        handle.cleanupQueue,
        `callback cleanup: ${entry.event}${entry.toolName ? ` ${entry.toolName}` : ''}`,
      )({ dispatchId: handle.dispatchId });
      entry.cleanup = 'settled';
    } catch {
      entry.cleanup = 'lost';
    } finally {
      state.pendingCleanups.delete(handle.dispatchId);
    }
  });
}
