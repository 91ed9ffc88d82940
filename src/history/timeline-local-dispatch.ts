/**
 * The timeline's local activity markers: `describeToolCall` says what the call in progress
 * is; a `dispatchHook` one is a local dispatch (`hookDispatch: 'local'`), one row from its
 * marker.
 *
 * @module
 */
import { VERSION_REFUSAL_TYPE } from '../common/identity.js';
import type { JsonObject } from '../common/json.js';
import { ActivityNames, type HookDispatchOutcome } from '../common/activity-io.js';
import { decodeFirstPayload, decodePayload, numberOf, type HistoryEvent } from './decode.js';
import {
  failureMessage,
  failureTypeOf,
  hasTimeout,
  innermost,
  timeoutTypeOf,
  type Failure,
} from './failures.js';
import { decode, numberOr, protoTime, timeOf, type TimelineBuild } from './timeline-build.js';
import { applyOutcome, mergedInputOf, watchCleanup } from './timeline-dispatches.js';
import { promptOfDispatch } from './timeline-session.js';
import type { HistoryDispatch } from './timeline-types.js';

type MarkerAttributes = NonNullable<HistoryEvent['markerRecordedEventAttributes']>;

/**
 * A local activity's marker: `describeToolCall` says what the call in progress is; a
 * `dispatchHook` one is a local dispatch.
 */
export function markerRecorded(
  build: TimelineBuild,
  event: HistoryEvent,
  marker: MarkerAttributes,
): void {
  if (marker.markerName !== 'core_local_activity') return;
  const data = decode<LocalActivityMarkerData>(build, marker.details?.data);
  if (data?.activity_type === ActivityNames.describeToolCall) {
    build.tools.described(decode<unknown>(build, marker.details?.result));
  } else if (data?.activity_type === ActivityNames.dispatchHook) {
    localDispatch(build, event, marker, data);
  }
}

/** What the SDK's core records of a local activity in its marker's `data`. */
interface LocalActivityMarkerData {
  activity_type?: unknown;
  /** When it was first scheduled: `{ seconds, nanos }`. */
  original_schedule_time?: { seconds?: unknown; nanos?: unknown } | null;
  /** When it ended: `{ seconds, nanos }`. */
  complete_time?: { seconds?: unknown; nanos?: unknown } | null;
}

/** `PreToolUse Read, 2 callbacks` (the dispatch's summary): event, tool, callback count. */
const DISPATCH_SUMMARY = /^(\S+?)(?: (.+?))?, (\d+) callbacks?$/;

/**
 * A local dispatch (`hookDispatch: 'local'`): one row as a `dispatchHook` activity gets, from
 * its marker. The marker's summary names the event, the tool and the callback count (a
 * marker without one, recorded before summaries, is the session's only local event's); its
 * result is the outcome; its failure (cancelled, timed out, failed) closes it as the
 * activity's would. A local attempt refused by a worker of another version is no row: the
 * dispatch goes through the task queue next, and that activity is the row.
 */
function localDispatch(
  build: TimelineBuild,
  event: HistoryEvent,
  marker: MarkerAttributes,
  data: LocalActivityMarkerData,
): void {
  const failure = marker.failure as Failure | undefined;
  if (failureTypeOf(failure) === VERSION_REFUSAL_TYPE) return;
  const summary = decodePayload<unknown>(event.userMetadata?.summary, build.converter);
  const named = typeof summary === 'string' ? DISPATCH_SUMMARY.exec(summary) : null;
  // Markers recorded before dispatches had summaries name no event: the session's only
  // local event, when it has one.
  const localEvents = build.input?.localDispatch ?? [];
  const hookEvent = named?.[1] ?? (localEvents.length === 1 ? localEvents[0]! : 'unknown');
  const toolName = named?.[2];
  const eventId = numberOf(event.eventId);
  const closedAt = timeOf(event);
  const scheduledAt = protoTime(data.original_schedule_time) ?? closedAt ?? 0;
  const budget =
    hookEvent === 'SessionEnd' ? build.input?.sessionEndHookTimeoutMs : build.input?.hookTimeoutMs;
  const dispatch: HistoryDispatch = {
    seq: build.timeline.dispatches.length,
    event: hookEvent,
    callbackCount: named
      ? Number(named[3])
      : numberOr((build.input?.hookCounts as Record<string, unknown> | undefined)?.[hookEvent], 0),
    decision: 'running',
    local: true,
    scheduledAt,
    budgetMs: numberOr(budget, 0),
    dispatchId: '',
    scheduledEventId: eventId,
    closedEventId: eventId,
    cancelRequested: false,
  };
  if (build.version !== undefined) dispatch.version = build.version;
  let payload: JsonObject | undefined;
  if (toolName !== undefined) {
    dispatch.toolName = toolName;
    const call = build.tools.localDispatchCall(hookEvent, toolName);
    if (call) {
      dispatch.toolUseId = call.toolUseId;
      payload = {
        toolName,
        toolUseId: call.toolUseId,
        ...(call.toolInput !== undefined ? { toolInput: call.toolInput } : {}),
        ...(call.toolOutput !== undefined ? { toolOutput: call.toolOutput } : {}),
      };
    }
  }
  // The marker records no input (no request id): the prompt running then.
  const prompt = promptOfDispatch(build, hookEvent, undefined);
  if (hookEvent === 'UserPromptSubmit' && prompt) payload = build.promptInputs.get(prompt);
  build.timeline.dispatches.push(dispatch);
  prompt?.dispatches.push(dispatch.seq);
  build.tools.dispatchScheduled(dispatch, payload?.toolInput);
  if (failure) localDispatchFailed(build, dispatch, failure);
  else localDispatchCompleted(build, dispatch, marker, payload);
  build.tools.dispatchClosed(dispatch, mergedInputOf(dispatch));
  if (dispatch.durationMs === undefined) {
    const endedAt = protoTime(data.complete_time) ?? closedAt;
    if (endedAt !== undefined) dispatch.durationMs = Math.max(0, endedAt - scheduledAt);
  }
}

/** A local dispatch whose marker records a failure: cancelled, its worker lost, or failed. */
function localDispatchFailed(
  build: TimelineBuild,
  dispatch: HistoryDispatch,
  failure: NonNullable<Failure>,
): void {
  if (failure.canceledFailureInfo || failure.cause?.canceledFailureInfo) {
    dispatch.decision = 'cancelled';
    watchCleanup(
      build,
      dispatch,
      decodeFirstPayload(failure.canceledFailureInfo?.details, build.converter),
    );
  } else if (hasTimeout(failure)) {
    dispatch.decision = 'worker_lost';
    dispatch.reason = `the worker running the dispatch was lost (${timeoutTypeOf(failure)})`;
  } else {
    dispatch.decision = 'error';
    dispatch.reason = failureMessage(innermost(failure)) ?? 'the dispatch failed';
  }
}

/** A local dispatch whose marker records the outcome its callbacks reported. */
function localDispatchCompleted(
  build: TimelineBuild,
  dispatch: HistoryDispatch,
  marker: MarkerAttributes,
  payload: JsonObject | undefined,
): void {
  const outcome = decode<HookDispatchOutcome>(build, marker.details?.result);
  applyOutcome(dispatch, outcome, payload);
  if (outcome?.status === 'timeout') {
    watchCleanup(build, dispatch, outcome);
    if (typeof outcome.dispatchId === 'string') dispatch.dispatchId = outcome.dispatchId;
  }
}
