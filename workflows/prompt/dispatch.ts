/**
 * One hook dispatch, seen from the workflow: the timeline entry, the fail-closed check, and
 * one activity for all callbacks of the event (or, inline, the activity it rides in). How it
 * ended is recorded by `dispatch-outcome.ts`: the merged result or a failure, and the wait
 * for a callback that outlived its dispatch.
 *
 * @module
 */
import type { BudgetLedger } from '../../src/common/budgets.js';
import { budgetHookInput } from './budget.js';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  TimeoutFailure,
  setCurrentDetails,
  uuid4,
} from '@temporalio/workflow';
import type {
  DispatchHookInput,
  HookDispatchOutcome,
  InlineHookDetail,
  CleanupHandle,
} from '../../src/common/activity-io.js';
import type { TimelineEntry, SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { HookEvent } from '../../src/common/hook-events.js';
import type { MergedHookResult } from '../../src/common/hook-rules.js';
import type { JsonObject } from '../../src/common/json.js';
import { dispatchSummary } from '../../src/common/summaries.js';
import { hookDispatchActivity, localHookDispatchActivity } from '../activity-options.js';
import { takeStreamEvents, type StreamOutboxState } from '../session/stream-outbox.js';
import {
  identityFields,
  retryRefused,
  versionRefusalOf,
  withRefusalRetries,
} from '../session/version-refusal.js';
import { dispatchFailure, outcomeResult, refuseWhileCleaningUp } from './dispatch-outcome.js';

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
  /** The session's budget ledger; absent without a budget (`budget.ts`). */
  budget?: BudgetLedger;
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
    // With a budget, PreToolUse is told what is left (this call counted).
    payload: event === HookEvent.PreToolUse ? { ...payload, ...budgetHookInput(state) } : payload,
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
