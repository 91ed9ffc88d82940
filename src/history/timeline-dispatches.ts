/**
 * The timeline's dispatch rows: one opened for each dispatch scheduled, filled from the
 * outcome its activity (or marker, or the activity that ran it inline) reported, its
 * callbacks' decisions and edits, and its end; a callback that outlived its dispatch is
 * watched until a wait for it ends.
 *
 * @module
 */
import { hookErrorRecord } from '../common/errors.js';
import { isHookEvent } from '../common/hook-events.js';
import { mergeHookOutputs } from '../common/hook-rules.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import type {
  CleanupHandle,
  DispatchHookInput,
  HookDispatchOutcome,
} from '../common/activity-io.js';
import type { HookOutput } from '../common/types.js';
import { numberOf, type HistoryEvent } from './decode.js';
import { diffValues } from './diff.js';
import { numberOr, timeOf, type TimelineBuild } from './timeline-build.js';
import { promptOfDispatch } from './timeline-session.js';
import type { HistoryCallback, HistoryDispatch } from './timeline-types.js';

/**
 * The dispatch row for the activity scheduled by `event`, with the dispatch's input: a new
 * one, or the row of the same dispatch refused by a worker of another version.
 */
export function openDispatch(
  build: TimelineBuild,
  event: HistoryEvent,
  dispatchInput: Partial<DispatchHookInput>,
): HistoryDispatch {
  const eventId = numberOf(event.eventId);
  // Scheduled again after a version refusal: the same dispatch, one row.
  const again = build.timeline.dispatches.find(
    (d) => d.decision === 'refused' && d.dispatchId === String(dispatchInput.dispatchId ?? ''),
  );
  if (again) {
    again.decision = 'running';
    again.scheduledEventId = eventId;
    delete again.closedEventId;
    delete again.reason;
    delete again.durationMs;
    build.byScheduledId.set(eventId, again);
    return again;
  }
  const payload = isPlainObject(dispatchInput.payload) ? dispatchInput.payload : {};
  const dispatch: HistoryDispatch = {
    seq: build.timeline.dispatches.length,
    event: String(dispatchInput.event ?? 'unknown'),
    callbackCount: numberOr(dispatchInput.callbackCount, 0),
    decision: 'running',
    scheduledAt: timeOf(event) ?? 0,
    budgetMs: numberOr(dispatchInput.budgetMs, 0),
    dispatchId: String(dispatchInput.dispatchId ?? ''),
    scheduledEventId: eventId,
    cancelRequested: false,
  };
  if (typeof payload.toolName === 'string') dispatch.toolName = payload.toolName;
  if (typeof payload.toolUseId === 'string') dispatch.toolUseId = payload.toolUseId;
  if (typeof dispatchInput.version === 'string') dispatch.version = dispatchInput.version;
  build.timeline.dispatches.push(dispatch);
  const requestId =
    typeof dispatchInput.requestId === 'string' ? dispatchInput.requestId : undefined;
  promptOfDispatch(build, dispatch.event, requestId)?.dispatches.push(dispatch.seq);
  build.byScheduledId.set(eventId, dispatch);
  build.payloads.set(dispatch.seq, payload as JsonObject);
  build.tools.dispatchScheduled(dispatch, payload.toolInput);
  return dispatch;
}

/** A dispatch's row has its decision: its closing event and duration. */
export function dispatchEnded(
  build: TimelineBuild,
  dispatch: HistoryDispatch,
  event: HistoryEvent,
): void {
  build.payloads.delete(dispatch.seq);
  build.tools.dispatchClosed(dispatch, mergedInputOf(dispatch));
  dispatch.closedEventId = numberOf(event.eventId);
  const closedAt = timeOf(event);
  if (dispatch.durationMs === undefined && closedAt !== undefined) {
    dispatch.durationMs = Math.max(0, closedAt - dispatch.scheduledAt);
  }
}

/** The `continue` edits of a dispatch's callbacks merged as the workflow merges them. */
export function mergedInputOf(dispatch: HistoryDispatch): JsonObject | undefined {
  if (!dispatch.callbacks) return undefined;
  const merged = mergeHookOutputs(dispatch.callbacks as HookOutput[]);
  return dispatch.event === 'PreToolUse'
    ? merged.modifiedInputBeforeDecision
    : merged.modifiedInput;
}

/** A callback outlived its dispatch: pending until a wait for it ends. */
export function watchCleanup(
  build: TimelineBuild,
  dispatch: HistoryDispatch,
  handle: Partial<CleanupHandle> | undefined,
): void {
  if (!handle || handle.settled !== false) return;
  dispatch.cleanup = 'pending';
  if (typeof handle.dispatchId === 'string') build.byDispatchId.set(handle.dispatchId, dispatch);
}

/**
 * An inline dispatch whose outcome travelled in `where` (an activity's result), which the
 * payload store kept: a history read without its payloads cannot say what was decided.
 */
export function outcomeStored(dispatch: HistoryDispatch, where: string): void {
  dispatch.decision = 'error';
  dispatch.reason =
    `the outcome is in ${where}, which this history does not hold ` +
    '(kept in the payload store: read it with its payloads, `inspect --payloads <folder>`)';
}

/** Fill a dispatch from the outcome its activity reported. */
export function applyOutcome(
  dispatch: HistoryDispatch,
  outcome: HookDispatchOutcome | undefined,
  payload: JsonObject | undefined,
): void {
  if (!outcome || typeof outcome !== 'object') {
    dispatch.decision = 'error';
    dispatch.reason = 'the dispatch reported no readable outcome';
    return;
  }
  if (typeof outcome.durationMs === 'number') dispatch.durationMs = outcome.durationMs;
  if (typeof outcome.callbackCount === 'number') dispatch.callbackCount = outcome.callbackCount;
  switch (outcome.status) {
    case 'completed': {
      const outputs = Array.isArray(outcome.outputs) ? outcome.outputs : [];
      const valid = outputs.filter(isPlainObject) as unknown as HookOutput[];
      const merged = mergeHookOutputs(valid);
      const durations = Array.isArray(outcome.callbackDurationsMs)
        ? outcome.callbackDurationsMs
        : [];
      dispatch.callbacks = valid.map((output, index) =>
        callbackOf(output, index, merged.decidedBy === index, durations[index], payload),
      );
      dispatch.decision = merged.action;
      if (merged.decidedBy !== undefined) dispatch.decidedBy = merged.decidedBy;
      if (merged.reason !== undefined) dispatch.reason = merged.reason;
      return;
    }
    case 'error':
      dispatch.decision = 'error';
      if (typeof outcome.callbackIndex === 'number') dispatch.decidedBy = outcome.callbackIndex;
      dispatch.reason = outcome.error?.message ?? 'a callback failed';
      if (
        isHookEvent(dispatch.event) &&
        typeof outcome.error?.name === 'string' &&
        typeof outcome.error.message === 'string'
      ) {
        dispatch.error = hookErrorRecord(dispatch.event, outcome.error, outcome.callbackIndex);
      }
      return;
    case 'timeout':
      dispatch.decision = 'timeout';
      dispatch.reason = `Hook ${dispatch.event} exceeded ${dispatch.budgetMs}ms`;
      if (isHookEvent(dispatch.event)) {
        dispatch.error = hookErrorRecord(
          dispatch.event,
          { name: 'HookTimeoutError', code: 'HOOK_TIMEOUT', message: dispatch.reason },
          typeof outcome.callbackIndex === 'number' ? outcome.callbackIndex : undefined,
        );
      }
      return;
    default:
      dispatch.decision = 'error';
      dispatch.reason = `unknown dispatch outcome '${String((outcome as { status?: unknown }).status)}'`;
  }
}

/**
 * One callback's output as the timeline shows it: its decision and reason, and its edits as
 * diffs against what it was given (the tool's input for tool events, the event's fields
 * otherwise; the tool's output for `modifiedOutput`).
 */
function callbackOf(
  output: HookOutput,
  index: number,
  decided: boolean,
  durationMs: number | undefined,
  payload: JsonObject | undefined,
): HistoryCallback {
  const callback: HistoryCallback = { index, action: output.action };
  if (typeof output.reason === 'string') callback.reason = output.reason;
  if (decided) callback.decided = true;
  if (typeof durationMs === 'number') callback.durationMs = durationMs;
  if (isPlainObject(output.modifiedInput)) {
    callback.modifiedInput = output.modifiedInput;
    const given = isPlainObject(payload?.toolInput) ? (payload.toolInput as JsonObject) : payload;
    const base = given ?? {};
    const diff = diffValues(base, { ...base, ...output.modifiedInput });
    if (diff) callback.inputDiff = diff;
  }
  if (output.modifiedOutput !== undefined) {
    callback.modifiedOutput = output.modifiedOutput;
    const diff = diffValues(payload?.toolOutput, output.modifiedOutput);
    if (diff) callback.outputDiff = diff;
  }
  return callback;
}
