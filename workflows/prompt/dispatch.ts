/**
 * One hook dispatch, seen from the workflow: the fail-closed check, one activity for all
 * callbacks of the event, the outcome turned into a merged result or a failure, the
 * timeline entry, and the wait for a callback that outlived its dispatch.
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
  setCurrentDetails,
  uuid4,
} from '@temporalio/workflow';
import {
  HOOK_DISPATCH_LOST_TYPE,
  type DispatchHookInput,
  type HookDispatchOutcome,
  type InlineHookDetail,
  type CleanupHandle,
} from '../../src/common/activity-io.js';
import type { TimelineEntry, SessionWorkflowInput } from '../../src/common/workflow-io.js';
import {
  clipErrorText,
  describeHookFailure,
  hookErrorRecord,
  messageOf,
  type SerializedError,
} from '../../src/common/errors.js';
import { HookEvent } from '../../src/common/hook-events.js';
import { mergeHookOutputs, type MergedHookResult } from '../../src/common/hook-rules.js';
import type { JsonObject } from '../../src/common/json.js';
import { dispatchSummary } from '../../src/common/summaries.js';
import {
  awaitHookSettledActivity,
  hookDispatchActivity,
  localHookDispatchActivity,
} from '../activity-options.js';
import { hookFailure, toFailure } from '../session/failures.js';
import { takeStreamEvents, type StreamOutboxState } from '../session/stream-outbox.js';
import {
  identityFields,
  isRefusedEverywhere,
  retryRefused,
  versionRefusalOf,
  withRefusalRetries,
} from '../session/version-refusal.js';

/** The session state a dispatch reads and writes. */
export interface DispatchState extends StreamOutboxState {
  /** The session's input; an upgrade replaces it with the new version's identity. */
  input: SessionWorkflowInput;
  taskQueue: string;
  /** This run's dispatches; `seq` counts from `timelineBase` (earlier runs' entries). */
  timeline: TimelineEntry[];
  timelineBase: number;
  /** Dispatches whose callbacks have not settled yet, by dispatch id: fail-closed while any. */
  pendingCleanups: Map<string, PendingCleanup>;
  /** Model steps taken in this session, across prompts. */
  modelSteps: number;
  /** The last decision for the session's search attributes (`search-attributes.ts`). */
  lastDecision?: string;
}

/** A callback that outlived its dispatch, and where to wait for it. */
interface PendingCleanup {
  entry: TimelineEntry;
  handle: CleanupHandle;
}

/** Extra fields recorded on the timeline entry. */
interface DispatchTags {
  toolUseId?: string;
  toolName?: string;
  requestId?: string;
}

/** The event's budget in ms. */
function budgetOf(input: SessionWorkflowInput, event: HookEvent): number {
  return event === HookEvent.SessionEnd ? input.sessionEndHookTimeoutMs : input.hookTimeoutMs;
}

/** The failure a dispatch refused for fail-closed raises; `close()` and handoff raise it too. */
export function cleanupPendingFailure(state: DispatchState) {
  return hookFailure(
    'HOOK_CLEANUP_PENDING',
    `A hook callback of this session is still cleaning up after being cancelled ` +
      `(${state.pendingCleanups.size} pending); the session is fail-closed until it settles`,
  );
}

/**
 * Whether `event` has callbacks in this session. A caller that checks it first skips
 * {@link dispatchEvent} (and the promises of an `await`) for an event with none.
 */
export function hasCallbacks(state: Pick<DispatchState, 'input'>, event: HookEvent): boolean {
  return (state.input.hookCounts[event] ?? 0) > 0;
}

/**
 * Dispatch `event` to its callbacks.
 *
 * @returns the merged outputs, or `undefined` when the event has no callbacks (nothing is
 *   scheduled and the fail-closed check is not made).
 * @throws ApplicationFailure for a callback error, a malformed output, a timeout, a lost
 *   worker or a fail-closed refusal; a cancellation (abort) is rethrown as is.
 */
export async function dispatchEvent(
  state: DispatchState,
  event: HookEvent,
  payload: JsonObject,
  tags: DispatchTags = {},
): Promise<MergedHookResult | undefined> {
  const callbackCount = state.input.hookCounts[event] ?? 0;
  if (callbackCount === 0) return undefined;
  const entry = openEntry(state, event, callbackCount, tags);
  try {
    // Awaited here, with no async function or `.catch` of its own around the activity (they
    // cost every dispatch three promises; a promise in workflow code costs a stack trace).
    refuseWhileCleaningUp(state, entry, event);
    const call = dispatchCall(state, event, payload, entry);
    let outcome: HookDispatchOutcome;
    try {
      try {
        outcome = await call.first();
      } catch (error) {
        if (!versionRefusalOf(error)) throw error;
        outcome = await call.afterRefusal(error);
      }
    } catch (error) {
      throw dispatchFailure(state, entry, event, error);
    }
    return outcomeResult(state, entry, event, outcome, call.budgetMs);
  } finally {
    // Settled, whichever way it ended: readers of the timeline may trust its outcome now.
    delete entry.pending;
    state.lastDecision = entry.outcome;
  }
}

/** A new timeline entry for a dispatch of `event`, pending until it ends. */
function openEntry(
  state: DispatchState,
  event: HookEvent,
  callbackCount: number,
  tags: DispatchTags,
): TimelineEntry {
  const entry: TimelineEntry = {
    seq: state.timelineBase + state.timeline.length,
    event,
    callbackCount,
    outcome: 'continue',
    durationMs: 0,
    startedAt: Date.now(),
    pending: true,
    ...tags,
    // Only a worker of this version runs the dispatch: the version that decided.
    ...(state.input.version !== undefined ? { version: state.input.version } : {}),
  };
  state.timeline.push(entry);
  return entry;
}

/**
 * Dispatch `event` inline (`hookDispatch: { UserPromptSubmit: 'inline' }`): its callbacks run
 * inside the activity `run` schedules with the dispatch's input (the send's first model step),
 * whose result carries their outcome. The entry, the fail-closed check and the outcome's
 * meaning are those of {@link dispatchEvent}.
 *
 * @returns the merged outputs and what `run` returned.
 * @throws as {@link dispatchEvent} for what the callbacks did; when `run` fails after they
 *   completed (the model call failed or was cancelled: the failure carries their outcome,
 *   `InlineHookDetail`), their outcome is recorded and `run`'s failure rethrown as it is.
 */
export async function dispatchInline<T>(
  state: DispatchState,
  event: HookEvent,
  payload: JsonObject,
  tags: DispatchTags,
  run: (hook: DispatchHookInput) => Promise<{ outcome: HookDispatchOutcome; value: T }>,
): Promise<{ merged: MergedHookResult; value: T }> {
  const entry = openEntry(state, event, state.input.hookCounts[event] ?? 0, tags);
  try {
    refuseWhileCleaningUp(state, entry, event);
    const budgetMs = budgetOf(state.input, event);
    setCurrentDetails(`running ${event} inline`);
    let result: { outcome: HookDispatchOutcome; value: T };
    try {
      result = await run(dispatchInputOf(state, event, payload, entry, budgetMs));
    } catch (error) {
      const decided = inlineOutcomeOf(error);
      if (!decided) throw dispatchFailure(state, entry, event, error);
      outcomeResult(state, entry, event, decided, budgetMs);
      throw error;
    }
    return {
      merged: outcomeResult(state, entry, event, result.outcome, budgetMs),
      value: result.value,
    };
  } finally {
    delete entry.pending;
    state.lastDecision = entry.outcome;
  }
}

/**
 * The input of an inline dispatch of `event` run inside another activity whose result brings
 * its outcome back (`hookDispatch: { PostToolUse: 'inline' }`: in the tool's execution), to
 * be recorded with {@link settleInline}. Undefined when the event has no callbacks, or while
 * the session is fail-closed: the default dispatch then refuses it and records the refusal.
 */
export function inlineDispatchInput(
  state: DispatchState,
  event: HookEvent,
  payload: JsonObject,
  tags: DispatchTags,
): DispatchHookInput | undefined {
  const callbackCount = state.input.hookCounts[event] ?? 0;
  if (callbackCount === 0 || state.pendingCleanups.size > 0) return undefined;
  return dispatchInputOf(
    state,
    event,
    payload,
    { callbackCount, ...tags },
    budgetOf(state.input, event),
  );
}

/**
 * Record what the inline dispatch `hook` ({@link inlineDispatchInput}) reported: the timeline
 * entry {@link dispatchEvent} would have made, opened now, and the merged outputs.
 * @throws as {@link dispatchEvent} for what the callbacks did.
 */
export function settleInline(
  state: DispatchState,
  hook: DispatchHookInput,
  tags: DispatchTags,
  outcome: HookDispatchOutcome,
): MergedHookResult {
  return recordInline(state, hook, tags, (entry) => {
    entry.startedAt -= Math.round(outcome.durationMs);
    return outcomeResult(state, entry, hook.event, outcome, hook.budgetMs);
  });
}

/**
 * Record that the activity running the inline dispatch `hook` was cancelled (an abort) while
 * its callbacks ran, for `durationMs`: a cancelled entry, which holds the session fail-closed
 * while a callback cleans up, as for {@link dispatchEvent}.
 * @returns the cancellation, to rethrow.
 */
export function inlineCancelled(
  state: DispatchState,
  hook: DispatchHookInput,
  tags: DispatchTags,
  error: unknown,
  durationMs: number,
): unknown {
  return recordInline(state, hook, tags, (entry) => {
    entry.startedAt -= durationMs;
    return dispatchFailure(state, entry, hook.event, error);
  });
}

function recordInline<T>(
  state: DispatchState,
  hook: DispatchHookInput,
  tags: DispatchTags,
  record: (entry: TimelineEntry) => T,
): T {
  const entry = openEntry(state, hook.event, hook.callbackCount, tags);
  try {
    return record(entry);
  } finally {
    delete entry.pending;
    state.lastDecision = entry.outcome;
  }
}

/** What a dispatch gives its callbacks' activity (a new dispatch id). */
function dispatchInputOf(
  state: DispatchState,
  event: HookEvent,
  payload: JsonObject,
  entry: Pick<TimelineEntry, 'callbackCount' | 'requestId'>,
  budgetMs: number,
): DispatchHookInput {
  return {
    dispatchId: uuid4(),
    sessionId: state.input.sessionId,
    agentName: state.input.agentName,
    ...identityFields(state.input),
    event,
    payload,
    budgetMs,
    callbackCount: entry.callbackCount,
    ...(entry.requestId !== undefined ? { requestId: entry.requestId } : {}),
  };
}

/**
 * The outcome an inline dispatch's failed step carries (`InlineHookDetail`: its failure's last
 * detail, or for a step that timed out, its last heartbeat's), if any: the callbacks completed
 * and left the prompt as it is, and the model was called with it.
 */
export function inlineOutcomeOf(error: unknown): HookDispatchOutcome | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  const details =
    cause instanceof CancelledFailure || cause instanceof ApplicationFailure
      ? (cause.details ?? [])
      : cause instanceof TimeoutFailure
        ? [cause.lastHeartbeatDetails]
        : [];
  const last = details.at(-1) as Partial<InlineHookDetail> | null | undefined;
  const outcome = last?.inlineHook;
  return outcome && typeof outcome === 'object' && typeof outcome.status === 'string'
    ? outcome
    : undefined;
}

/** Fail-closed: no dispatch while a callback of the session is still cleaning up. */
function refuseWhileCleaningUp(state: DispatchState, entry: TimelineEntry, event: HookEvent): void {
  if (state.pendingCleanups.size > 0) {
    entry.outcome = 'refused';
    // No activity runs, so no worker logs it: the workflow does.
    throw failed(state, entry, event, cleanupPendingFailure(state), true);
  }
}

/** The dispatch's activity: its first try, and the tries after a version refusal. */
interface DispatchCall {
  budgetMs: number;
  /** The local activity when the event is dispatched locally, else the task-queue activity. */
  first(): Promise<HookDispatchOutcome>;
  /** After `first()` was refused by a worker of another version: through the task queue. */
  afterRefusal(refusal: unknown): Promise<HookDispatchOutcome>;
}

/**
 * Name the dispatch (its id, its input) and say what runs it. The first try has no retries of
 * its own: the caller catches a version refusal and calls `afterRefusal`.
 */
function dispatchCall(
  state: DispatchState,
  event: HookEvent,
  payload: JsonObject,
  entry: TimelineEntry,
): DispatchCall {
  const budgetMs = budgetOf(state.input, event);
  const dispatchInput = {
    ...dispatchInputOf(state, event, payload, entry, budgetMs),
    // Outside a send (SessionStart, SessionEnd), a sub-agent's dispatch takes its task's
    // queue: its parent's events go out with its first activity (`SubagentTask.streamStart`).
    ...takeStreamEvents(state, entry.requestId ?? state.input.task?.requestId),
  };
  const summary = dispatchSummary(event, entry.toolName, entry.callbackCount);
  setCurrentDetails(`running ${event}${entry.toolName ? ` ${entry.toolName}` : ''}`);
  const started = Date.now();
  const what = { task: `the ${event} dispatch`, event };
  const onQueue = (eager: boolean) =>
    hookDispatchActivity(
      state.taskQueue,
      budgetMs,
      state.input.dispatchHeartbeatTimeoutMs,
      eager,
      summary,
    )(dispatchInput);
  // A worker of another version refuses it (nothing ran): scheduled again, within the budget.
  const viaQueue = () => withRefusalRetries(state.input, what, budgetMs, onQueue);
  // A local dispatch runs on this workflow task's worker; if that one runs another version,
  // it refuses and the dispatch goes through the task queue to a worker that does.
  if (state.input.localDispatch?.includes(event)) {
    return {
      budgetMs,
      first: () => localHookDispatchActivity(budgetMs, summary)(dispatchInput),
      afterRefusal: viaQueue,
    };
  }
  return {
    budgetMs,
    first: () => onQueue(true),
    afterRefusal: (refusal) => retryRefused(state.input, what, budgetMs, onQueue, started, refusal),
  };
}

/**
 * Record on `entry` how the dispatch's activity failed, and return what to throw: a
 * cancellation (abort) as it is, anything else as the session's failure.
 */
function dispatchFailure(
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
function outcomeResult(
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
