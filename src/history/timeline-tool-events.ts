/**
 * The timeline's tool call handlers: the activities of a call (the model step that asks for
 * it, the permission check, the execution with its inline PostToolUse dispatch) and the
 * approval timer of a person's wait, fed to the {@link ToolCallTracker}.
 *
 * @module
 */
import { budgetStepCompleted } from './timeline-budget.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import type {
  CleanupHandle,
  DispatchHookInput,
  HookDispatchOutcome,
  ModelStepInput,
} from '../common/activity-io.js';
import { modelStepOpened } from './timeline-model-steps.js';
import { decodePayload, numberOf, type HistoryEvent } from './decode.js';
import { decode, timeOf, type ActivityClose, type TimelineBuild } from './timeline-build.js';
import {
  applyOutcome,
  dispatchEnded,
  openDispatch,
  outcomeStored,
  watchCleanup,
} from './timeline-dispatches.js';
import type { ToolCallState, ToolExecuteOutcome } from './tool-calls.js';

type TimerAttributes = NonNullable<HistoryEvent['timerStartedEventAttributes']>;
type TimerClosedAttributes = NonNullable<
  HistoryEvent['timerFiredEventAttributes'] | HistoryEvent['timerCanceledEventAttributes']
>;
/** The `ActivityTaskScheduled` attributes a scheduled handler reads. */
export type ScheduledAttributes = NonNullable<HistoryEvent['activityTaskScheduledEventAttributes']>;
type ToolExecuteOutcomeResult = Extract<ToolExecuteOutcome, { kind: 'completed' }>['result'];

/** A timer: while a call waits for a person, its approval deadline. */
export function timerStarted(
  build: TimelineBuild,
  event: HistoryEvent,
  timer: TimerAttributes,
): void {
  const timeout = timer.startToFireTimeout;
  const durationMs = timeout
    ? numberOf(timeout.seconds) * 1000 + Math.floor(numberOf(timeout.nanos) / 1_000_000)
    : 0;
  const summary = decodePayload<unknown>(event.userMetadata?.summary, build.converter);
  build.tools.timerStarted(
    numberOf(event.eventId),
    timeOf(event) ?? 0,
    durationMs,
    typeof summary === 'string' ? summary : undefined,
  );
}

/** A timer fired: a person's wait reached its approval deadline. */
export function timerFired(
  build: TimelineBuild,
  event: HistoryEvent,
  fired: TimerClosedAttributes,
): void {
  build.tools.timerClosed(numberOf(fired.startedEventId), timeOf(event) ?? 0, true);
}

/** A timer cancelled: a person's wait ended before its deadline. */
export function timerCanceled(
  build: TimelineBuild,
  event: HistoryEvent,
  canceled: TimerClosedAttributes,
): void {
  build.tools.timerClosed(numberOf(canceled.startedEventId), timeOf(event) ?? 0, false);
}

/**
 * A `modelStep` activity: its result names the tool calls the model asked for. One that
 * carries an inline dispatch (`hookDispatch: { UserPromptSubmit: 'inline' }`) is that
 * dispatch's row, closed by the step (its result or failure carries the outcome).
 */
export function modelStepScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  build.tools.modelStepScheduled();
  const stepInput = decode<Partial<ModelStepInput>>(build, scheduled.input);
  modelStepOpened(build, event, stepInput);
  if (isPlainObject(stepInput?.hook)) {
    openDispatch(build, event, stepInput.hook as Partial<DispatchHookInput>).inline = true;
    return;
  }
  build.others.set(numberOf(event.eventId), (close) => {
    if (close.kind !== 'completed') return;
    const output = close.result() as { toolCalls?: unknown } | undefined;
    build.tools.modelStepCompleted(output?.toolCalls);
    if (build.budget) budgetStepCompleted(build.budget, build.input, output);
  });
}

/** A `checkPermission` activity: the permission policy's answer for a call. */
export function permissionCheckScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  const check = decode<{ toolUseId?: unknown; input?: unknown }>(build, scheduled.input);
  if (typeof check?.toolUseId !== 'string') return;
  const state = build.tools.permissionCheckScheduled(check.toolUseId, check.input);
  build.others.set(numberOf(event.eventId), (close, durationMs) => {
    build.tools.permissionChecked(
      state,
      close.kind === 'completed' ? close.result() : undefined,
      durationMs,
    );
  });
}

/** An `executeTool` activity: the tool's result, and its inline PostToolUse dispatch's row. */
export function executeToolScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  const run = decode<{
    toolUseId?: unknown;
    toolName?: unknown;
    input?: unknown;
    hook?: unknown;
    streamEvents?: unknown;
  }>(build, scheduled.input);
  if (typeof run?.toolUseId !== 'string') return;
  const state: ToolCallState = build.tools.executeScheduled(run.toolUseId, run.toolName, run.input);
  const decided = Array.isArray(run.streamEvents)
    ? run.streamEvents.find(
        (e): e is Record<string, unknown> =>
          isPlainObject(e) &&
          e.type === 'permission-decided' &&
          e.decidedBy === 'person' &&
          e.toolUseId === run.toolUseId,
      )
    : undefined;
  if (decided) build.tools.personDecided(state, decided);
  const hook = isPlainObject(run.hook) ? (run.hook as Partial<DispatchHookInput>) : undefined;
  build.others.set(numberOf(event.eventId), (close, durationMs, closed) => {
    const inline = hook ? inlineToolEnd(build, close) : undefined;
    const outcome: ToolExecuteOutcome =
      close.kind === 'completed'
        ? {
            kind: 'completed',
            result: close.result() as ToolExecuteOutcomeResult,
            offloaded: close.offloaded,
          }
        : inline && 'cancelled' in inline
          ? {
              kind: 'completed',
              result: inline.ran as unknown as ToolExecuteOutcomeResult,
              offloaded: false,
            }
          : close;
    build.tools.executeClosed(state, outcome, durationMs);
    if (state.call.result) state.call.result.closedEventId = numberOf(closed.eventId);
    if (hook && inline) inlineToolDispatch(build, event, closed, hook, inline);
  });
}

/**
 * How an execution that carried an inline PostToolUse dispatch (`ExecuteToolInput.hook`)
 * ended for it: the callbacks' outcome came with the tool's result; or the execution was
 * cancelled while they ran (its details: the dispatch's cleanup handle, then the tool's
 * result, which stands); or its result is in the payload store, out of this history's reach.
 * Undefined when the callbacks did not run (the tool failed, was cancelled, or its worker
 * was lost).
 */
function inlineToolEnd(
  build: TimelineBuild,
  close: ActivityClose,
):
  | { outcome: unknown; ran: JsonObject }
  | { cancelled: Partial<CleanupHandle> | undefined; ran: JsonObject; durationMs?: number }
  | { unreadable: true; ran?: undefined }
  | undefined {
  if (close.kind === 'completed') {
    const result = close.result();
    if (isPlainObject(result) && 'hook' in result) {
      return { outcome: result.hook, ran: result as JsonObject };
    }
    // A tool's result without an outcome: the tool failed, so the callbacks did not run.
    if (isPlainObject(result) && typeof result.status === 'string') return undefined;
    // Anything else is a reference to the payload store (a big result and outcome together).
    return { unreadable: true };
  }
  if (close.kind !== 'cancelled') return undefined;
  const details = (close.details?.payloads ?? []).map((payload) =>
    decodePayload<unknown>(payload as Parameters<typeof decodePayload>[0], build.converter),
  );
  const last = details.at(-1);
  if (!isPlainObject(last) || !isPlainObject(last.inlineTool)) return undefined;
  return {
    cancelled: details[0] as Partial<CleanupHandle> | undefined,
    ran: last.inlineTool as JsonObject,
    ...(typeof last.durationMs === 'number' ? { durationMs: last.durationMs } : {}),
  };
}

/** The row of an execution's inline PostToolUse dispatch, opened and closed with it. */
function inlineToolDispatch(
  build: TimelineBuild,
  scheduled: HistoryEvent,
  closed: HistoryEvent,
  hook: Partial<DispatchHookInput>,
  inline: NonNullable<ReturnType<typeof inlineToolEnd>>,
): void {
  // The callbacks were given the tool's output with the input the workflow scheduled.
  const payload = isPlainObject(hook.payload) ? hook.payload : {};
  const toolOutput = inline.ran?.model;
  const dispatch = openDispatch(build, scheduled, {
    ...hook,
    payload: toolOutput === undefined ? payload : { ...payload, toolOutput },
  });
  dispatch.inline = true;
  // The row belongs to the execution's activity, which has closed: nothing else refers to it.
  build.byScheduledId.delete(dispatch.scheduledEventId);
  if ('outcome' in inline) {
    const outcome = inline.outcome as HookDispatchOutcome;
    applyOutcome(dispatch, outcome, build.payloads.get(dispatch.seq));
    if (outcome?.status === 'timeout') watchCleanup(build, dispatch, outcome);
  } else if ('cancelled' in inline) {
    dispatch.decision = 'cancelled';
    dispatch.cancelRequested = true;
    if (inline.durationMs !== undefined) dispatch.durationMs = inline.durationMs;
    watchCleanup(build, dispatch, inline.cancelled);
  } else {
    outcomeStored(dispatch, "the tool's result");
  }
  dispatchEnded(build, dispatch, closed);
}
