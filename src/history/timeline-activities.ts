/**
 * The timeline's activity handlers: an activity scheduled goes to the handler of its type
 * (a hook dispatch, a wait for a lingering callback, a tool call's activities); one closed
 * (completed, failed, timed out or cancelled) fills its dispatch row, or ends its tool call
 * stage, or the wait.
 *
 * @module
 */
import { historyMcpTools } from './timeline-mcp.js';
import { modelStepClosed } from './timeline-model-steps.js';
import { VERSION_REFUSAL_TYPE } from '../common/identity.js';
import { isPlainObject } from '../common/json.js';
import {
  ActivityNames,
  HOOK_DISPATCH_LOST_TYPE,
  type CleanupHandle,
  type DispatchHookInput,
  type HookDispatchOutcome,
} from '../common/activity-io.js';
import { decodePayload, numberOf, type HistoryEvent } from './decode.js';
import { failureMessage, timeoutTypeOf, type Failure } from './failures.js';
import {
  decode,
  timeOf,
  timeOfEventId,
  type ActivityClose,
  type TimelineBuild,
} from './timeline-build.js';
import {
  applyOutcome,
  dispatchEnded,
  openDispatch,
  outcomeStored,
  watchCleanup,
} from './timeline-dispatches.js';
import {
  executeToolScheduled,
  modelStepScheduled,
  permissionCheckScheduled,
  type ScheduledAttributes,
} from './timeline-tool-events.js';
import type { HistoryDispatch } from './timeline-types.js';

type Attributes<K extends keyof HistoryEvent> = NonNullable<HistoryEvent[K]>;

/** What handles an activity of one type when it is scheduled. */
type ScheduledHandler = (
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
) => void;

/** A `dispatchHook` activity starts a dispatch. */
function dispatchHookScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  openDispatch(build, event, decode<Partial<DispatchHookInput>>(build, scheduled.input) ?? {});
}

/** An `awaitHookSettled` activity waits for a callback that outlived its dispatch. */
function awaitHookSettledScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  const waitInput = decode<{ dispatchId?: unknown }>(build, scheduled.input);
  if (typeof waitInput?.dispatchId === 'string')
    build.settleWaits.set(numberOf(event.eventId), waitInput.dispatchId);
}

/** The handler of each activity type the timeline reads, by its name. */
const SCHEDULED_HANDLERS = new Map<string, ScheduledHandler>([
  [ActivityNames.modelStep, modelStepScheduled],
  [ActivityNames.dispatchHook, dispatchHookScheduled],
  [ActivityNames.awaitHookSettled, awaitHookSettledScheduled],
  [ActivityNames.checkPermission, permissionCheckScheduled],
  [ActivityNames.executeTool, executeToolScheduled],
  [ActivityNames.listMcpTools, listMcpToolsScheduled],
]);

/** A `listMcpTools` activity: the MCP tool list the session started with. */
function listMcpToolsScheduled(build: TimelineBuild, event: HistoryEvent): void {
  build.others.set(numberOf(event.eventId), (close) => {
    if (close.kind !== 'completed') return;
    const tools = historyMcpTools(close.result());
    if (tools) build.timeline.mcpTools = tools;
  });
}

/** An activity scheduled: handled by its type's handler (other types are not in the timeline). */
export function activityScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  const type = scheduled.activityType?.name;
  if (typeof type === 'string') SCHEDULED_HANDLERS.get(type)?.(build, event, scheduled);
}

/** The workflow asked to cancel an activity: a dispatch's row says so. */
export function activityCancelRequested(
  build: TimelineBuild,
  _event: HistoryEvent,
  requested: Attributes<'activityTaskCancelRequestedEventAttributes'>,
): void {
  const dispatch = build.byScheduledId.get(numberOf(requested.scheduledEventId));
  if (dispatch) dispatch.cancelRequested = true;
}

/**
 * An activity completed: a dispatch gets the outcome it reported (an inline one, the outcome
 * in its model step's result); a wait for a lingering callback, `settled`.
 */
export function activityCompleted(
  build: TimelineBuild,
  event: HistoryEvent,
  completed: Attributes<'activityTaskCompletedEventAttributes'>,
): void {
  const offloaded = build.stored.has(numberOf(event.eventId));
  const result = () => decode<unknown>(build, completed.result);
  activityClosed(
    build,
    event,
    completed.scheduledEventId,
    'settled',
    { kind: 'completed', result, offloaded },
    (dispatch) => {
      const result = decode<unknown>(build, completed.result);
      let outcome = result as HookDispatchOutcome | undefined;
      if (dispatch.inline) {
        const step = isPlainObject(result) ? result : {};
        outcome = step.hook as HookDispatchOutcome | undefined;
        if (outcome === undefined) {
          // The step's result holds the outcome: a big model answer moves it to the payload
          // store, which a history read without its payloads does not reach.
          outcomeStored(dispatch, "the model step's result");
          return;
        }
        // The step called the model too: its tool calls run next.
        if (step.deferred === undefined) build.tools.modelStepCompleted(step.toolCalls);
      }
      applyOutcome(dispatch, outcome, build.payloads.get(dispatch.seq));
      if (outcome?.status === 'timeout') watchCleanup(build, dispatch, outcome);
    },
  );
}

/** An activity failed: a dispatch's error, its refusal, or its lost worker's retry. */
export function activityFailed(
  build: TimelineBuild,
  event: HistoryEvent,
  failed: Attributes<'activityTaskFailedEventAttributes'>,
): void {
  const message = failureMessage(failed.failure as Failure) ?? 'the activity failed';
  activityClosed(
    build,
    event,
    failed.scheduledEventId,
    'lost',
    { kind: 'failed', message },
    (dispatch) => {
      const decided = dispatch.inline
        ? inlineOutcomeOf(build, failed.failure as Failure | undefined)
        : undefined;
      // The callbacks completed; the model call after them failed.
      if (decided) return applyOutcome(dispatch, decided as HookDispatchOutcome, undefined);
      const failureType = (failed.failure as Failure | undefined)?.applicationFailureInfo?.type;
      // A retried attempt that found the callbacks begun by an earlier, lost one.
      if (failureType === HOOK_DISPATCH_LOST_TYPE) {
        dispatch.decision = 'worker_lost';
        dispatch.reason =
          'the worker running the dispatch was lost (its callbacks began, then its heartbeats stopped)';
        return;
      }
      const refused = failureType === VERSION_REFUSAL_TYPE;
      dispatch.decision = refused ? 'refused' : 'error';
      if (refused) dispatch.refusals = (dispatch.refusals ?? 0) + 1;
      dispatch.reason = failureMessage(failed.failure as Failure) ?? 'the dispatch failed';
    },
  );
}

/** An activity timed out: its worker was lost. */
export function activityTimedOut(
  build: TimelineBuild,
  event: HistoryEvent,
  timedOut: Attributes<'activityTaskTimedOutEventAttributes'>,
): void {
  activityClosed(
    build,
    event,
    timedOut.scheduledEventId,
    'lost',
    { kind: 'worker_lost' },
    (dispatch) => {
      // An inline dispatch's callbacks completed; the model call after them timed out.
      const decided = dispatch.inline
        ? inlineOutcomeOf(build, timedOut.failure as Failure | undefined)
        : undefined;
      if (decided) return applyOutcome(dispatch, decided as HookDispatchOutcome, undefined);
      dispatch.decision = 'worker_lost';
      const type = timeoutTypeOf(timedOut.failure as Failure);
      dispatch.reason = `the worker running the dispatch was lost (${type})`;
    },
  );
}

/** An activity cancelled: its dispatch too (a callback may outlive it). */
export function activityCanceled(
  build: TimelineBuild,
  event: HistoryEvent,
  canceled: Attributes<'activityTaskCanceledEventAttributes'>,
): void {
  activityClosed(
    build,
    event,
    canceled.scheduledEventId,
    'lost',
    { kind: 'cancelled', details: canceled.details },
    (dispatch) => {
      const detail = decode<Partial<CleanupHandle> & { inlineHook?: unknown }>(
        build,
        canceled.details,
      );
      // An inline dispatch's callbacks completed; the model call after them was cancelled.
      if (dispatch.inline && isPlainObject(detail?.inlineHook)) {
        return applyOutcome(dispatch, detail.inlineHook as HookDispatchOutcome, undefined);
      }
      dispatch.decision = 'cancelled';
      watchCleanup(build, dispatch, detail);
    },
  );
}

/**
 * What an inline dispatch's failed, cancelled or timed-out model step says its callbacks
 * decided (`InlineHookDetail`: the failure's last detail, or the last heartbeat's), when they
 * completed before it failed.
 */
function inlineOutcomeOf(build: TimelineBuild, failure: Failure | undefined): unknown {
  type Details = { payloads?: unknown[] | null } | null | undefined;
  const timeout = (failure?.timeoutFailureInfo ?? failure?.cause?.timeoutFailureInfo) as
    { lastHeartbeatDetails?: Details } | null | undefined;
  const info = (failure?.applicationFailureInfo ?? failure?.canceledFailureInfo) as
    { details?: Details } | null | undefined;
  const payloads = timeout ? timeout.lastHeartbeatDetails?.payloads : info?.details?.payloads;
  if (!payloads || payloads.length === 0) return undefined;
  const last = decodePayload<{ inlineHook?: unknown }>(
    payloads.at(-1) as Parameters<typeof decodePayload>[0],
    build.converter,
  );
  return isPlainObject(last) ? last.inlineHook : undefined;
}

/**
 * An activity closed (completed, failed, timed out or cancelled). A dispatch gets its
 * decision from `fill`, then its closing event and duration; a wait for a lingering
 * callback marks that callback `waitEnded` (`settled` when the wait completed, else `lost`).
 */
function activityClosed(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduledEventId: unknown,
  waitEnded: 'settled' | 'lost',
  close: ActivityClose,
  fill: (dispatch: HistoryDispatch) => void,
): void {
  const scheduledId = numberOf(scheduledEventId);
  modelStepClosed(build, scheduledId, close, event);
  const dispatch = build.byScheduledId.get(scheduledId);
  if (!dispatch) {
    const other = build.others.get(scheduledId);
    if (other) {
      build.others.delete(scheduledId);
      const scheduledAt = timeOfEventId(build, scheduledId);
      const closedAt = timeOf(event);
      other(
        close,
        scheduledAt !== undefined && closedAt !== undefined
          ? Math.max(0, closedAt - scheduledAt)
          : undefined,
        event,
      );
      return;
    }
    settle(build, scheduledId, waitEnded);
    return;
  }
  fill(dispatch);
  dispatchEnded(build, dispatch, event);
}

/** A wait for a lingering callback ended: the callback `settled`, or was `lost`. */
function settle(build: TimelineBuild, scheduledId: number, how: 'settled' | 'lost'): void {
  const dispatchId = build.settleWaits.get(scheduledId);
  if (dispatchId === undefined) return;
  const dispatch = build.byDispatchId.get(dispatchId);
  if (dispatch) dispatch.cleanup = how;
}
