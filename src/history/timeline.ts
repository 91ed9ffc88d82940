/**
 * A session's hook timeline rebuilt from its Temporal history alone: one entry per
 * `dispatchHook` activity (scheduled with a {@link DispatchHookInput}, completed with a
 * {@link HookDispatchOutcome}, or failed, timed out or cancelled) and per local dispatch
 * (`hookDispatch: 'local'`: a local activity's marker, its summary naming the event and the
 * tool, its result the outcome), the SessionEnd marker
 * (the memo upsert recorded right before SessionEnd is scheduled) and how the workflow
 * ended. Pure: it reads the history it is given and nothing else, so it works on open and
 * closed sessions, on histories fetched from a server and on exported files alike.
 *
 * @module
 */
import { defaultPayloadConverter, type PayloadConverter } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { hookErrorRecord, type HookErrorRecord } from '../common/errors.js';
import { isHookEvent } from '../common/hook-events.js';
import { VERSION_REFUSAL_TYPE } from '../common/identity.js';
import { describePrompt, mergeHookOutputs } from '../common/hook-rules.js';
import { isPlainObject, type JsonObject, type JsonValue } from '../common/json.js';
import type { HookOutput, Prompt } from '../common/types.js';
import {
  ActivityNames,
  HOOK_DISPATCH_LOST_TYPE,
  Updates,
  type CleanupHandle,
  type DispatchHookInput,
  type HookDispatchOutcome,
  type SessionWorkflowInput,
  type UpgradeAnswer,
  type AbandonedUpgrade,
  type VersionUpgrade,
  type SessionWorkflowResult,
} from '../common/protocol.js';
import {
  decodeFirstPayload,
  decodePayload,
  numberOf,
  sessionIdOfHistory,
  type HistoryEvent,
  type PayloadList,
} from './decode.js';
import { diffValues, type ValueDiff } from './diff.js';
import {
  ToolCallTracker,
  type HistoryToolCall,
  type ToolCallState,
  type ToolExecuteOutcome,
} from './tool-calls.js';

export type { HistoryToolCall } from './tool-calls.js';
export type { LineChange, ValueDiff } from './diff.js';

/**
 * How a dispatch ended, as far as its history shows:
 * - `continue` / `skip` / `abort`: the callbacks' merged decision (the first skip or abort
 *   wins, as the workflow merges them);
 * - `error`: a callback threw or returned a malformed output, or the activity failed;
 * - `timeout`: the budget ran out inside the activity;
 * - `cancelled`: the prompt was aborted (or the session closed or cancelled) during it;
 * - `worker_lost`: the activity timed out (heartbeat or start-to-close): its worker died;
 * - `running`: not finished yet (open sessions);
 * - `refused`: workers of other versions refused it until its budget was spent (its
 *   attempts are one dispatch: a refused attempt scheduled again keeps its row).
 *
 * The workflow's own timeline also knows `refused` (a dispatch refused while a cancelled
 * callback cleaned up); nothing is scheduled for it, so it is not in the history.
 */
export type HistoryDecision =
  | 'continue'
  | 'skip'
  | 'abort'
  | 'error'
  | 'timeout'
  | 'cancelled'
  | 'worker_lost'
  | 'running'
  /** Every worker that took it ran another version and refused it (nothing ran). */
  | 'refused';

/** One callback of a dispatch: its own decision, why, what it changed, how long it took. */
export interface HistoryCallback {
  /** 0-based position among the event's callbacks (the text shows `#index+1`). */
  index: number;
  action: HookOutput['action'];
  /** The callback's `reason`. */
  reason?: string;
  /** Its skip or abort decided the dispatch (the first one does). */
  decided?: true;
  /** Its own time, ms (absent in histories from before 0.2: only the dispatch's is known). */
  durationMs?: number;
  /** Its `modifiedInput`, as it returned it (merged over the input). */
  modifiedInput?: JsonObject;
  /** That edit against the input the callback was given (every callback gets the original). */
  inputDiff?: ValueDiff;
  /** Its `modifiedOutput` (PostToolUse, PostToolUseFailure). */
  modifiedOutput?: JsonValue;
  /** That replacement against the tool output the callback was given. */
  outputDiff?: ValueDiff;
}

/** One hook dispatch as its history records it. */
export interface HistoryDispatch {
  /**
   * 0-based position among the dispatches in the history. The workflow's own timeline also
   * counts refused dispatches, which schedule nothing, so its `seq` may run ahead of this one.
   */
  seq: number;
  /** The hook event. */
  event: string;
  /** `payload.toolName`, for the tool events. */
  toolName?: string;
  /** `payload.toolUseId`, for the tool events. */
  toolUseId?: string;
  /** Callbacks run: the activity's count when it reported, else the workflow's expectation. */
  callbackCount: number;
  decision: HistoryDecision;
  /** The session's version, which only a worker of that version runs (absent before versions). */
  version?: string;
  /**
   * Run as a local activity (`hookDispatch: 'local'`): its history is one marker, recorded
   * once it ended. The marker records no input: `dispatchId` is empty (unless a callback
   * outlived it), the budget is the session's hook budget, a tool event's call is the one in
   * progress, and edits are diffed against what the history shows the callbacks were given.
   */
  local?: true;
  /**
   * Run inline: UserPromptSubmit (`hookDispatch: { UserPromptSubmit: 'inline' }`) inside the
   * send's first model step, whose `modelStep` activity is this row's (its result or failure
   * carries the outcome); PostToolUse (`{ PostToolUse: 'inline' }`) inside the tool's
   * `executeTool` activity, after the tool succeeded (the row exists once the execution
   * closed with the outcome, or was cancelled while the callbacks ran).
   */
  inline?: true;
  /** How many times a worker of another version refused it before it ran (or was refused for good). */
  refusals?: number;
  /** 0-based position of the callback that decided (skip/abort) or failed. */
  decidedBy?: number;
  /** Why: the deciding callback's reason, the error message, the budget that ran out, ... */
  reason?: string;
  /** Every callback's own output, when the dispatch completed (in order). */
  callbacks?: HistoryCallback[];
  /**
   * How it failed, when the activity reported it (`error`: a callback threw or returned a
   * malformed output; `timeout`): event, callback, code, name and message.
   */
  error?: HookErrorRecord;
  /**
   * How long it took, ms: the activity's own measure when it reported one, else the time
   * between the scheduled and the closing event. Absent while running.
   */
  durationMs?: number;
  /** When the dispatch was scheduled, ms since epoch. */
  scheduledAt: number;
  /** The budget the callbacks had, ms. */
  budgetMs: number;
  /** The dispatch's id (also the id a lingering callback is waited on by). */
  dispatchId: string;
  /** Event id of `ActivityTaskScheduled` (of `MarkerRecorded` for a local dispatch). */
  scheduledEventId: number;
  /** Event id of the event that closed the activity, when closed (the marker, if local). */
  closedEventId?: number;
  /** Whether the workflow asked to cancel the activity (abort, close, cancellation). */
  cancelRequested: boolean;
  /**
   * A callback outlived the dispatch (timeout or cancellation): whether it settled, its
   * worker was lost, or the session still waits for it.
   */
  cleanup?: 'pending' | 'settled' | 'lost';
}

/** One prompt (a `send` Update) as its history records it. */
export interface HistoryPrompt {
  /** The send's request id (its Update id). */
  requestId: string;
  /** The prompt's text (image parts as `[image]`). */
  prompt: string;
  /** When the workflow accepted it, ms since epoch. */
  acceptedAt: number;
  /** When it ended, ms since epoch (absent while it runs). */
  completedAt?: number;
  /** How it ended (`failed`: the Update failed); absent while it runs. */
  status?: 'completed' | 'interrupted' | 'aborted' | 'max_turns' | 'failed';
  /** The answer's text, or the failure's message. */
  text?: string;
  /** `seq` of the dispatches scheduled while it ran, in order. */
  dispatches: number[];
  /** `toolUseId` of its tool calls, in order. */
  toolCalls: string[];
}

/** The SessionEnd marker: recorded once, right before SessionEnd is scheduled. */
interface HistorySessionEndMarker {
  /** SessionEnd's `reason`: `other` (close), `idle_timeout`, `cancelled`, ... */
  reason: string;
  /** Workflow time it was recorded, ms since epoch. */
  at: number;
  /** Event id of the `WorkflowPropertiesModified` event carrying it. */
  eventId: number;
}

/** A workflow execution's status, named as the Temporal client names it. */
type HistoryWorkflowStatus =
  | 'RUNNING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TERMINATED'
  | 'TIMED_OUT'
  | 'CONTINUED_AS_NEW';

/** A session's hook timeline rebuilt from its history. */
export interface HistoryTimeline {
  /** The workflow id, when the history records it (servers from 1.24 on do). */
  workflowId?: string;
  /** The session id, from the workflow's input. */
  sessionId?: string;
  /** The agent's name, from the workflow's input. */
  agentName?: string;
  /**
   * The agent version the session started with, from the workflow's input (absent in
   * sessions started before versions existed).
   */
  version?: string;
  /** The fingerprint of the agent's definition, when the input records one. */
  fingerprint?: string;
  /** The workflow type (`sessionWorkflow` for sessions). */
  workflowType?: string;
  /** How the execution stands at the last event of the history. */
  status: HistoryWorkflowStatus;
  /** When the execution started, ms since epoch. */
  startedAt?: number;
  /** When the execution closed, ms since epoch (absent while running). */
  closedAt?: number;
  /** Every hook dispatch, in the order scheduled. */
  dispatches: HistoryDispatch[];
  /**
   * Every tool call, in the order the model asked for them: its input and how it was
   * changed, its permission (the policy's answer, a person's wait and answer), its result.
   */
  toolCalls: HistoryToolCall[];
  /**
   * Every prompt (`send` Update) of this run, in the order accepted: its text, how it ended,
   * and the dispatches and tool calls that ran for it (the session page shows the session as
   * these turns). Dispatches outside every prompt (SessionStart, SessionEnd) belong to none.
   */
  prompts: HistoryPrompt[];
  /**
   * The session's moves to other versions (`session.upgrade()`), from the `upgrade` Updates'
   * results: from which version to which, when, by whom, after how many prompts. Dispatches
   * before a move carry its `fromVersion`, later ones its `toVersion`. Absent when none.
   */
  upgrades?: VersionUpgrade[];
  /**
   * Moves begun whose client sent neither finish nor cancel in time (it died): the session
   * gave its turn back and stayed on its version. From the memo upserts (`upgradeAbandoned`);
   * absent when none.
   */
  abandonedUpgrades?: AbandonedUpgrade[];
  /** The SessionEnd marker, once recorded. */
  sessionEndMarker?: HistorySessionEndMarker;
  /** SessionEnd's reason, from the workflow's result (completed sessions). */
  endReason?: string;
  /** Prompts the session handled, from the workflow's result (completed sessions). */
  promptsHandled?: number;
  /** Why the session never opened (SessionStart aborted or failed), from the result. */
  startError?: string;
  /** The failure or termination reason of a failed or terminated execution. */
  closeReason?: string;
  /** Number of events in the history. */
  eventCount: number;
}

/** Options of {@link timelineFromHistory}. */
interface TimelineFromHistoryOptions {
  /** Decodes payloads. @default Temporal's default payload converter (JSON, binary, null) */
  payloadConverter?: PayloadConverter;
  /**
   * Ids of events whose payload the history held as a payload-store reference before it was
   * decoded (see {@link storedPayloadEventIds}): their tool results are marked `offloaded`.
   */
  storedPayloadEventIds?: ReadonlySet<number>;
}

type Failure = {
  message?: string | null;
  cause?: Failure | null;
  timeoutFailureInfo?: { timeoutType?: number | string | null } | null;
  applicationFailureInfo?: { type?: string | null } | null;
  canceledFailureInfo?: { details?: PayloadList } | null;
} | null;

/**
 * Rebuild a session's hook timeline from its Temporal history.
 *
 * @param history as returned by `handle.fetchHistory()` or `historyFromJSON()`.
 * @throws {TypeError} when `history` has no events or does not start with
 *   `WorkflowExecutionStarted` (it is not a workflow history).
 */
export function timelineFromHistory(
  history: History,
  options: TimelineFromHistoryOptions = {},
): HistoryTimeline {
  const converter = options.payloadConverter ?? defaultPayloadConverter;

  const events = history?.events;
  if (!Array.isArray(events) || events.length === 0) {
    throw new TypeError('not a workflow history: it has no events');
  }
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (!started) {
    throw new TypeError('not a workflow history: the first event is not WorkflowExecutionStarted');
  }

  const timeline: HistoryTimeline = {
    status: 'RUNNING',
    dispatches: [],
    toolCalls: [],
    prompts: [],
    eventCount: events.length,
  };
  const startedAt = timeOf(events[0]!);
  if (startedAt !== undefined) timeline.startedAt = startedAt;
  if (started.workflowId) timeline.workflowId = started.workflowId;
  if (started.workflowType?.name) timeline.workflowType = started.workflowType.name;
  const sessionId = sessionIdOfHistory(history, converter);
  if (sessionId !== undefined) timeline.sessionId = sessionId;

  const input = decodeFirstPayload<Partial<SessionWorkflowInput>>(started.input, converter);
  const identity = input as { version?: unknown; fingerprint?: unknown } | undefined;
  if (typeof input?.agentName === 'string') timeline.agentName = input.agentName;
  if (typeof identity?.version === 'string') timeline.version = identity.version;
  if (typeof identity?.fingerprint === 'string') timeline.fingerprint = identity.fingerprint;

  const build: TimelineBuild = {
    timeline,
    converter,
    byScheduledId: new Map(),
    settleWaits: new Map(),
    byDispatchId: new Map(),
    payloads: new Map(),
    others: new Map(),
    tools: new ToolCallTracker(input),
    stored: options.storedPayloadEventIds ?? new Set(),
    updateNames: new Map(),
    events,
    promptsByAcceptedId: new Map(),
    openPrompts: [],
    promptCalls: new Map(),
    input,
    promptInputs: new Map(),
    ...(timeline.version !== undefined ? { version: timeline.version } : {}),
  };
  for (const event of events) {
    if (event.markerRecordedEventAttributes) {
      markerRecorded(build, event, event.markerRecordedEventAttributes);
    } else if (event.timerStartedEventAttributes) {
      timerStarted(build, event, event.timerStartedEventAttributes);
    } else if (event.timerFiredEventAttributes) {
      const { startedEventId } = event.timerFiredEventAttributes;
      build.tools.timerClosed(numberOf(startedEventId), timeOf(event) ?? 0, true);
    } else if (event.timerCanceledEventAttributes) {
      const { startedEventId } = event.timerCanceledEventAttributes;
      build.tools.timerClosed(numberOf(startedEventId), timeOf(event) ?? 0, false);
    } else if (event.workflowExecutionUpdateAcceptedEventAttributes) {
      updateAccepted(build, event, event.workflowExecutionUpdateAcceptedEventAttributes);
    } else if (event.workflowExecutionUpdateCompletedEventAttributes) {
      const completed = event.workflowExecutionUpdateCompletedEventAttributes;
      updateCompleted(build, event, completed);
      const updateId = completed.meta?.updateId;
      if (updateId && build.updateNames.get(updateId) === Updates.upgrade.name) {
        const answer = decode<UpgradeAnswer>(build, completed.outcome?.success);
        if (answer?.upgrade) {
          (timeline.upgrades ??= []).push(answer.upgrade);
          if (typeof answer.upgrade.toVersion === 'string')
            build.version = answer.upgrade.toVersion;
        }
      }
    } else if (event.activityTaskScheduledEventAttributes) {
      activityScheduled(build, event, event.activityTaskScheduledEventAttributes);
    } else if (event.activityTaskCancelRequestedEventAttributes) {
      const { scheduledEventId } = event.activityTaskCancelRequestedEventAttributes;
      const dispatch = build.byScheduledId.get(numberOf(scheduledEventId));
      if (dispatch) dispatch.cancelRequested = true;
    } else if (event.activityTaskCompletedEventAttributes) {
      const completed = event.activityTaskCompletedEventAttributes;
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
    } else if (event.activityTaskFailedEventAttributes) {
      const failed = event.activityTaskFailedEventAttributes;
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
    } else if (event.activityTaskTimedOutEventAttributes) {
      const timedOut = event.activityTaskTimedOutEventAttributes;
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
    } else if (event.activityTaskCanceledEventAttributes) {
      const canceled = event.activityTaskCanceledEventAttributes;
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
    } else if (event.workflowPropertiesModifiedEventAttributes) {
      memoUpserted(build, event, event.workflowPropertiesModifiedEventAttributes);
    } else {
      const closedStatus = closedStatusOf(event);
      if (closedStatus) workflowClosed(build, event, closedStatus);
    }
  }
  timeline.toolCalls = build.tools.finish();
  promptToolCalls(build);
  return timeline;
}

/**
 * Each prompt's tool calls: a finished prompt's from its result, in order; calls of no
 * finished prompt belong to the one still running.
 */
function promptToolCalls(build: TimelineBuild): void {
  const claimed = new Set<string>();
  const known = new Set(build.timeline.toolCalls.map((call) => call.toolUseId));
  for (const prompt of build.timeline.prompts) {
    prompt.toolCalls = (build.promptCalls.get(prompt.requestId) ?? []).filter((id) =>
      known.has(id),
    );
    for (const id of prompt.toolCalls) claimed.add(id);
  }
  const open = build.timeline.prompts.find((prompt) => prompt.status === undefined);
  if (open) {
    open.toolCalls = build.timeline.toolCalls
      .map((call) => call.toolUseId)
      .filter((id) => !claimed.has(id));
  }
}

/** How a non-dispatch activity closed, for the tool call it belongs to. */
type ActivityClose =
  | { kind: 'completed'; result: () => unknown; offloaded: boolean }
  | { kind: 'failed'; message: string }
  | { kind: 'worker_lost' }
  | { kind: 'cancelled'; details?: PayloadList };

/** What {@link timelineFromHistory} keeps while it reads a history's events. */
interface TimelineBuild {
  timeline: HistoryTimeline;
  converter: PayloadConverter;
  /** Dispatches by their scheduled event id. */
  byScheduledId: Map<number, HistoryDispatch>;
  /** Activities waiting for a lingering callback, by scheduled event id → dispatch id. */
  settleWaits: Map<number, string>;
  /** Dispatches whose callback outlived them, by dispatch id. */
  byDispatchId: Map<string, HistoryDispatch>;
  /** Each dispatch's payload (what its callbacks got), by `seq`, until it closes. */
  payloads: Map<number, JsonObject>;
  /** Other activities of a tool call (model step, permission check, tool), by scheduled id. */
  others: Map<
    number,
    (close: ActivityClose, durationMs: number | undefined, closed: HistoryEvent) => void
  >;
  tools: ToolCallTracker;
  /** Events whose payload was a payload-store reference. */
  stored: ReadonlySet<number>;
  /** Prompts by the event id of their `send` Update's acceptance. */
  promptsByAcceptedId: Map<number, HistoryPrompt>;
  /**
   * Prompts accepted and not answered yet, in the order they were accepted: they run one at a
   * time in that order, so the first is the one running (the rest wait their turn).
   */
  openPrompts: HistoryPrompt[];
  /** The tool use ids a finished prompt's result lists, by request id. */
  promptCalls: Map<string, string[]>;
  /** Update names by update id, from their accepted events (their completions name none). */
  updateNames: Map<string, string>;
  /** The history's events. */
  events: readonly HistoryEvent[];
  /** The workflow's input (hook budgets, for local dispatches). */
  input: Partial<SessionWorkflowInput> | undefined;
  /** What UserPromptSubmit's callbacks were given, by prompt (for local dispatches). */
  promptInputs: Map<HistoryPrompt, JsonObject>;
  /** The version the session runs at this point of the history (moves by upgrades). */
  version?: string;
}

type MarkerAttributes = NonNullable<HistoryEvent['markerRecordedEventAttributes']>;
type TimerAttributes = NonNullable<HistoryEvent['timerStartedEventAttributes']>;
type UpdateAcceptedAttributes = NonNullable<
  HistoryEvent['workflowExecutionUpdateAcceptedEventAttributes']
>;

/**
 * A local activity's marker: `describeToolCall` says what the call in progress is; a
 * `dispatchHook` one is a local dispatch.
 */
function markerRecorded(build: TimelineBuild, event: HistoryEvent, marker: MarkerAttributes): void {
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
  if (failure) {
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
  } else {
    const outcome = decode<HookDispatchOutcome>(build, marker.details?.result);
    applyOutcome(dispatch, outcome, payload);
    if (outcome?.status === 'timeout') {
      watchCleanup(build, dispatch, outcome);
      if (typeof outcome.dispatchId === 'string') dispatch.dispatchId = outcome.dispatchId;
    }
  }
  build.tools.dispatchClosed(dispatch, mergedInputOf(dispatch));
  if (dispatch.durationMs === undefined) {
    const endedAt = protoTime(data.complete_time) ?? closedAt;
    if (endedAt !== undefined) dispatch.durationMs = Math.max(0, endedAt - scheduledAt);
  }
}

/** A `{ seconds, nanos }` time (a local activity marker's) in ms since epoch. */
function protoTime(
  time: { seconds?: unknown; nanos?: unknown } | null | undefined,
): number | undefined {
  if (!time || time.seconds === undefined || time.seconds === null) return undefined;
  return numberOf(time.seconds) * 1000 + Math.floor(numberOf(time.nanos) / 1_000_000);
}

/** The application failure type in a failure's chain, if any. */
function failureTypeOf(failure: Failure | undefined): string | undefined {
  for (let f = failure ?? null, depth = 0; f && depth < 8; f = f.cause ?? null, depth++) {
    const type = f.applicationFailureInfo?.type;
    if (typeof type === 'string') return type;
  }
  return undefined;
}

function hasTimeout(failure: Failure): boolean {
  for (let f = failure, depth = 0; f && depth < 8; f = f.cause ?? null, depth++) {
    if (f.timeoutFailureInfo) return true;
  }
  return false;
}

/** The deepest failure of a chain (a local activity's marker wraps the activity's own). */
function innermost(failure: Failure): Failure {
  let f = failure;
  for (let depth = 0; f?.cause && depth < 8; depth++) f = f.cause;
  return f;
}

/** A timer: while a call waits for a person, its approval deadline. */
function timerStarted(build: TimelineBuild, event: HistoryEvent, timer: TimerAttributes): void {
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

/** An accepted Update: a `decidePermission` is a person's answer, with who sent it. */
function updateAccepted(
  build: TimelineBuild,
  event: HistoryEvent,
  accepted: UpdateAcceptedAttributes,
): void {
  const request = accepted.acceptedRequest;
  const updateId = request?.meta?.updateId;
  if (updateId && request?.input?.name) build.updateNames.set(updateId, request.input.name);
  if (request?.input?.name === 'send') {
    const send = decode<{ requestId?: unknown; prompt?: unknown }>(build, request.input.args);
    const prompt: HistoryPrompt = {
      requestId: String(send?.requestId ?? request.meta?.updateId ?? ''),
      prompt: promptText(send?.prompt),
      acceptedAt: timeOf(event) ?? 0,
      dispatches: [],
      toolCalls: [],
    };
    build.timeline.prompts.push(prompt);
    if (typeof send?.prompt === 'string' || Array.isArray(send?.prompt)) {
      build.promptInputs.set(prompt, { ...describePrompt(send.prompt as Prompt) });
    }
    build.promptsByAcceptedId.set(numberOf(event.eventId), prompt);
    build.openPrompts.push(prompt);
    return;
  }
  if (request?.input?.name !== 'decidePermission') return;
  const identity = request.meta?.identity;
  build.tools.decided(
    timeOf(event) ?? 0,
    decode<unknown>(build, request.input.args),
    typeof identity === 'string' && identity !== '' ? identity : undefined,
  );
}

type UpdateCompletedAttributes = NonNullable<
  HistoryEvent['workflowExecutionUpdateCompletedEventAttributes']
>;

/** A completed `send` Update ends its prompt: its status, its answer, its tool calls. */
function updateCompleted(
  build: TimelineBuild,
  event: HistoryEvent,
  completed: UpdateCompletedAttributes,
): void {
  const prompt = build.promptsByAcceptedId.get(numberOf(completed.acceptedEventId));
  if (!prompt) return;
  prompt.completedAt = timeOf(event) ?? 0;
  const failure = completed.outcome?.failure as Failure | undefined;
  if (failure) {
    prompt.status = 'failed';
    const message = failureMessage(failure);
    if (message) prompt.text = message;
  } else {
    const result = decode<{ status?: unknown; text?: unknown; toolCalls?: unknown }>(
      build,
      completed.outcome?.success,
    );
    const status = result?.status;
    prompt.status =
      status === 'completed' ||
      status === 'interrupted' ||
      status === 'aborted' ||
      status === 'max_turns'
        ? status
        : 'completed';
    if (typeof result?.text === 'string') prompt.text = result.text;
    const calls = Array.isArray(result?.toolCalls) ? result.toolCalls : [];
    build.promptCalls.set(
      prompt.requestId,
      calls
        .map((call: unknown) => (call as { toolUseId?: unknown } | null)?.toolUseId)
        .filter((id): id is string => typeof id === 'string'),
    );
  }
  const open = build.openPrompts.indexOf(prompt);
  if (open >= 0) build.openPrompts.splice(open, 1);
}

/**
 * The prompt a dispatch belongs to (none for SessionStart and SessionEnd): the open one of its
 * `requestId` (a dispatch's input names its send), else the one running, the first accepted of
 * those still open (histories from before dispatches named their send, local dispatches'
 * markers).
 */
function promptOfDispatch(
  build: TimelineBuild,
  event: string,
  requestId: string | undefined,
): HistoryPrompt | undefined {
  if (event === 'SessionStart' || event === 'SessionEnd') return undefined;
  const named =
    requestId === undefined ? undefined : build.openPrompts.find((p) => p.requestId === requestId);
  return named ?? build.openPrompts[0];
}

/** A prompt as text: its text parts, image parts as `[image]`. */
function promptText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt)) return '';
  return prompt
    .map((part: unknown) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      return p?.type === 'text' && typeof p.text === 'string' ? p.text : '[image]';
    })
    .join('\n');
}

type ScheduledAttributes = NonNullable<HistoryEvent['activityTaskScheduledEventAttributes']>;
type MemoAttributes = NonNullable<HistoryEvent['workflowPropertiesModifiedEventAttributes']>;

function decode<T>(build: TimelineBuild, payloads: PayloadList): T | undefined {
  return decodeFirstPayload<T>(payloads, build.converter);
}

/** A `dispatchHook` activity starts a dispatch; an `awaitHookSettled` one waits for a callback. */
function activityScheduled(
  build: TimelineBuild,
  event: HistoryEvent,
  scheduled: ScheduledAttributes,
): void {
  const eventId = numberOf(event.eventId);
  const type = scheduled.activityType?.name;
  if (type === ActivityNames.modelStep) {
    build.tools.modelStepScheduled();
    const stepInput = decode<{ hook?: unknown }>(build, scheduled.input);
    // An inline dispatch (`hookDispatch: { UserPromptSubmit: 'inline' }`): a row of its own,
    // closed by the step (its result or failure carries the outcome).
    if (isPlainObject(stepInput?.hook)) {
      openDispatch(build, event, stepInput.hook as Partial<DispatchHookInput>).inline = true;
      return;
    }
    build.others.set(eventId, (close) => {
      if (close.kind !== 'completed') return;
      const output = close.result() as { toolCalls?: unknown } | undefined;
      build.tools.modelStepCompleted(output?.toolCalls);
    });
  } else if (type === ActivityNames.dispatchHook) {
    openDispatch(build, event, decode<Partial<DispatchHookInput>>(build, scheduled.input) ?? {});
  } else if (type === ActivityNames.awaitHookSettled) {
    const waitInput = decode<{ dispatchId?: unknown }>(build, scheduled.input);
    if (typeof waitInput?.dispatchId === 'string')
      build.settleWaits.set(eventId, waitInput.dispatchId);
  } else if (type === ActivityNames.checkPermission) {
    const check = decode<{ toolUseId?: unknown; input?: unknown }>(build, scheduled.input);
    if (typeof check?.toolUseId !== 'string') return;
    const state = build.tools.permissionCheckScheduled(check.toolUseId, check.input);
    build.others.set(eventId, (close, durationMs) => {
      build.tools.permissionChecked(
        state,
        close.kind === 'completed' ? close.result() : undefined,
        durationMs,
      );
    });
  } else if (type === ActivityNames.executeTool) {
    const run = decode<{
      toolUseId?: unknown;
      toolName?: unknown;
      input?: unknown;
      hook?: unknown;
    }>(build, scheduled.input);
    if (typeof run?.toolUseId !== 'string') return;
    const state: ToolCallState = build.tools.executeScheduled(
      run.toolUseId,
      run.toolName,
      run.input,
    );
    const hook = isPlainObject(run.hook) ? (run.hook as Partial<DispatchHookInput>) : undefined;
    build.others.set(eventId, (close, durationMs, closed) => {
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
      if (hook && inline) inlineToolDispatch(build, event, closed, hook, inline);
    });
  }
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

/**
 * An inline dispatch whose outcome travelled in `where` (an activity's result), which the
 * payload store kept: a history read without its payloads cannot say what was decided.
 */
function outcomeStored(dispatch: HistoryDispatch, where: string): void {
  dispatch.decision = 'error';
  dispatch.reason =
    `the outcome is in ${where}, which this history does not hold ` +
    '(kept in the payload store: read it with its payloads, `inspect --payloads <folder>`)';
}

/**
 * The dispatch row for the activity scheduled by `event`, with the dispatch's input: a new
 * one, or the row of the same dispatch refused by a worker of another version.
 */
function openDispatch(
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

type ToolExecuteOutcomeResult = Extract<ToolExecuteOutcome, { kind: 'completed' }>['result'];

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

/** A dispatch's row has its decision: its closing event and duration. */
function dispatchEnded(build: TimelineBuild, dispatch: HistoryDispatch, event: HistoryEvent): void {
  build.payloads.delete(dispatch.seq);
  build.tools.dispatchClosed(dispatch, mergedInputOf(dispatch));
  dispatch.closedEventId = numberOf(event.eventId);
  const closedAt = timeOf(event);
  if (dispatch.durationMs === undefined && closedAt !== undefined) {
    dispatch.durationMs = Math.max(0, closedAt - dispatch.scheduledAt);
  }
}

/** The `continue` edits of a dispatch's callbacks merged as the workflow merges them. */
function mergedInputOf(dispatch: HistoryDispatch): JsonObject | undefined {
  if (!dispatch.callbacks) return undefined;
  const merged = mergeHookOutputs(dispatch.callbacks as HookOutput[]);
  return dispatch.event === 'PreToolUse'
    ? merged.modifiedInputBeforeDecision
    : merged.modifiedInput;
}

/** A callback outlived its dispatch: pending until a wait for it ends. */
function watchCleanup(
  build: TimelineBuild,
  dispatch: HistoryDispatch,
  handle: Partial<CleanupHandle> | undefined,
): void {
  if (!handle || handle.settled !== false) return;
  dispatch.cleanup = 'pending';
  if (typeof handle.dispatchId === 'string') build.byDispatchId.set(handle.dispatchId, dispatch);
}

/**
 * The first upsert of `sessionEndMarker` is the SessionEnd marker; each `upgradeAbandoned`,
 * an abandoned move.
 */
function memoUpserted(build: TimelineBuild, event: HistoryEvent, modified: MemoAttributes): void {
  const abandoned = decodePayload<AbandonedUpgrade>(
    modified.upsertedMemo?.fields?.upgradeAbandoned,
    build.converter,
  );
  if (abandoned && typeof abandoned.toVersion === 'string') {
    (build.timeline.abandonedUpgrades ??= []).push(abandoned);
  }
  const marker = decodePayload<{ reason?: unknown; at?: unknown }>(
    modified.upsertedMemo?.fields?.sessionEndMarker,
    build.converter,
  );
  if (marker && !build.timeline.sessionEndMarker) {
    build.timeline.sessionEndMarker = {
      reason: String(marker.reason ?? 'unknown'),
      at: numberOr(marker.at, timeOf(event) ?? 0),
      eventId: numberOf(event.eventId),
    };
  }
}

/** The execution closed: its status, and what its result or failure says. */
function workflowClosed(
  build: TimelineBuild,
  event: HistoryEvent,
  closedStatus: HistoryWorkflowStatus,
): void {
  const { timeline } = build;
  timeline.status = closedStatus;
  const closedAt = timeOf(event);
  if (closedAt !== undefined) timeline.closedAt = closedAt;
  const result = event.workflowExecutionCompletedEventAttributes?.result;
  if (result) {
    const value = decode<Partial<SessionWorkflowResult>>(build, result);
    if (typeof value?.endReason === 'string') timeline.endReason = value.endReason;
    if (typeof value?.promptsHandled === 'number') timeline.promptsHandled = value.promptsHandled;
    if (value?.startError && typeof value.startError.message === 'string') {
      timeline.startError = value.startError.message;
    }
  }
  const failure = event.workflowExecutionFailedEventAttributes?.failure as Failure | undefined;
  const why =
    failureMessage(failure ?? null) ?? event.workflowExecutionTerminatedEventAttributes?.reason;
  if (why) timeline.closeReason = why;
}

/** Fill a dispatch from the outcome its activity reported. */
function applyOutcome(
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

function settle(build: TimelineBuild, scheduledId: number, how: 'settled' | 'lost'): void {
  const dispatchId = build.settleWaits.get(scheduledId);
  if (dispatchId === undefined) return;
  const dispatch = build.byDispatchId.get(dispatchId);
  if (dispatch) dispatch.cleanup = how;
}

function closedStatusOf(event: HistoryEvent): HistoryWorkflowStatus | undefined {
  if (event.workflowExecutionCompletedEventAttributes) return 'COMPLETED';
  if (event.workflowExecutionFailedEventAttributes) return 'FAILED';
  if (event.workflowExecutionCanceledEventAttributes) return 'CANCELLED';
  if (event.workflowExecutionTerminatedEventAttributes) return 'TERMINATED';
  if (event.workflowExecutionTimedOutEventAttributes) return 'TIMED_OUT';
  if (event.workflowExecutionContinuedAsNewEventAttributes) return 'CONTINUED_AS_NEW';
  return undefined;
}

const TIMEOUT_TYPES: Record<number, string> = {
  1: 'START_TO_CLOSE',
  2: 'SCHEDULE_TO_START',
  3: 'SCHEDULE_TO_CLOSE',
  4: 'HEARTBEAT',
};

/** The timeout type of an activity timeout failure, named as the SDK names it (`HEARTBEAT`). */
function timeoutTypeOf(failure: Failure): string {
  for (let f = failure, depth = 0; f && depth < 8; f = f.cause ?? null, depth++) {
    const type = f.timeoutFailureInfo?.timeoutType;
    if (typeof type === 'number') return TIMEOUT_TYPES[type] ?? String(type);
    if (typeof type === 'string') return type.replace(/^TIMEOUT_TYPE_/, '');
  }
  return 'UNKNOWN';
}

function failureMessage(failure: Failure): string | undefined {
  return typeof failure?.message === 'string' && failure.message !== ''
    ? failure.message
    : undefined;
}

/** Time of the event with this id (ids are 1-based positions in the history). */
function timeOfEventId(build: TimelineBuild, eventId: number): number | undefined {
  const event = build.events[eventId - 1];
  return event && numberOf(event.eventId) === eventId ? timeOf(event) : undefined;
}

/** Event time in ms since epoch. */
function timeOf(event: HistoryEvent): number | undefined {
  const time = event.eventTime;
  if (!time) return undefined;
  return numberOf(time.seconds) * 1000 + Math.floor(numberOf(time.nanos) / 1_000_000);
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
