/**
 * A session's hook timeline rebuilt from its Temporal history alone: one entry per
 * `dispatchHook` activity (scheduled with a `DispatchHookInput`, completed with a
 * `HookDispatchOutcome`, or failed, timed out or cancelled) and per local dispatch
 * (`hookDispatch: 'local'`: a local activity's marker, its summary naming the event and the
 * tool, its result the outcome), the SessionEnd marker
 * (the memo upsert recorded right before SessionEnd is scheduled) and how the workflow
 * ended. Pure: it reads the history it is given and nothing else, so it works on open and
 * closed sessions, on histories fetched from a server and on exported files alike.
 *
 * `timelineFromHistory` reads the events in order and hands each to the handler of its kind
 * ({@link EVENT_HANDLERS}); the handlers, grouped by concern in the `timeline-*` modules, fill
 * a {@link TimelineBuild}. The timeline's types are in `timeline-types.ts`.
 *
 * @module
 */
import { historyMcpTools } from './timeline-mcp.js';
import { historyBudgetOf } from './timeline-budget.js';
import { defaultPayloadConverter, type PayloadConverter } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import type { SessionWorkflowInput } from '../common/workflow-io.js';
import { decodeFirstPayload, sessionIdOfHistory, type HistoryEvent } from './decode.js';
import {
  activityCanceled,
  activityCancelRequested,
  activityCompleted,
  activityFailed,
  activityScheduled,
  activityTimedOut,
} from './timeline-activities.js';
import {
  childCanceled,
  childCompleted,
  childFailed,
  childInitiated,
  childStartFailed,
  childTerminated,
  childTimedOut,
  subagentPromptStarted,
} from './timeline-children.js';
import { createTimelineBuild, timeOf, type TimelineBuild } from './timeline-build.js';
import { markerRecorded } from './timeline-local-dispatch.js';
import {
  memoUpserted,
  promptToolCalls,
  updateAccepted,
  updateCompleted,
  workflowClosed,
} from './timeline-session.js';
import { timerCanceled, timerFired, timerStarted } from './timeline-tool-events.js';
import type { HistoryTimeline, HistoryWorkflowStatus } from './timeline-types.js';

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
  const { timeline, input } = startTimeline(history, events, started, converter);
  const build = createTimelineBuild(
    timeline,
    converter,
    events,
    input,
    options.storedPayloadEventIds,
  );
  subagentPromptStarted(build);
  for (const event of events) handleEvent(build, event);
  timeline.toolCalls = build.tools.finish();
  promptToolCalls(build);
  if (build.budget) timeline.budget = historyBudgetOf(build.budget);
  return timeline;
}

type StartedAttributes = NonNullable<HistoryEvent['workflowExecutionStartedEventAttributes']>;

/** The timeline as the first event says it started, and the workflow's input. */
function startTimeline(
  history: History,
  events: readonly HistoryEvent[],
  started: StartedAttributes,
  converter: PayloadConverter,
): { timeline: HistoryTimeline; input: Partial<SessionWorkflowInput> | undefined } {
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
  const lineage = input?.lineage;
  if (lineage) {
    const { agentPath, parentSessionId, depth } = lineage;
    timeline.subagent = { agentPath, parentSessionId, depth };
  }
  if (typeof identity?.version === 'string') timeline.version = identity.version;
  if (typeof identity?.fingerprint === 'string') timeline.fingerprint = identity.fingerprint;
  const carried = historyMcpTools(input?.carry?.mcpTools);
  if (carried) timeline.mcpTools = carried;
  return { timeline, input };
}

/** The kinds of history event: the name of the attributes field each kind sets. */
type EventKind = {
  [K in keyof HistoryEvent]-?: K extends `${string}EventAttributes` ? K : never;
}[keyof HistoryEvent];

/** What reads one kind of event into the timeline. */
type EventHandler<K extends EventKind> = (
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: NonNullable<HistoryEvent[K]>,
) => void;

/** The workflow closed with `status`. */
function closedAs(status: HistoryWorkflowStatus): EventHandler<EventKind> {
  return (build, event) => workflowClosed(build, event, status);
}

/**
 * The handler of each kind of event the timeline reads, in the order they are tried (an event
 * sets one attributes field); events of other kinds are not in the timeline.
 */
const EVENT_HANDLERS: { [K in EventKind]?: EventHandler<K> } = {
  markerRecordedEventAttributes: markerRecorded,
  timerStartedEventAttributes: timerStarted,
  timerFiredEventAttributes: timerFired,
  timerCanceledEventAttributes: timerCanceled,
  workflowExecutionUpdateAcceptedEventAttributes: updateAccepted,
  workflowExecutionUpdateCompletedEventAttributes: updateCompleted,
  activityTaskScheduledEventAttributes: activityScheduled,
  activityTaskCancelRequestedEventAttributes: activityCancelRequested,
  activityTaskCompletedEventAttributes: activityCompleted,
  activityTaskFailedEventAttributes: activityFailed,
  activityTaskTimedOutEventAttributes: activityTimedOut,
  activityTaskCanceledEventAttributes: activityCanceled,
  workflowPropertiesModifiedEventAttributes: memoUpserted,
  startChildWorkflowExecutionInitiatedEventAttributes: childInitiated,
  startChildWorkflowExecutionFailedEventAttributes: childStartFailed,
  childWorkflowExecutionCompletedEventAttributes: childCompleted,
  childWorkflowExecutionFailedEventAttributes: childFailed,
  childWorkflowExecutionCanceledEventAttributes: childCanceled,
  childWorkflowExecutionTerminatedEventAttributes: childTerminated,
  childWorkflowExecutionTimedOutEventAttributes: childTimedOut,
  workflowExecutionCompletedEventAttributes: closedAs('COMPLETED'),
  workflowExecutionFailedEventAttributes: closedAs('FAILED'),
  workflowExecutionCanceledEventAttributes: closedAs('CANCELLED'),
  workflowExecutionTerminatedEventAttributes: closedAs('TERMINATED'),
  workflowExecutionTimedOutEventAttributes: closedAs('TIMED_OUT'),
  workflowExecutionContinuedAsNewEventAttributes: closedAs('CONTINUED_AS_NEW'),
};

const HANDLER_ENTRIES = Object.entries(EVENT_HANDLERS) as Array<
  [EventKind, EventHandler<EventKind>]
>;

/** Hand `event` to the handler of its kind. */
function handleEvent(build: TimelineBuild, event: HistoryEvent): void {
  for (const [kind, handler] of HANDLER_ENTRIES) {
    const attributes = event[kind];
    if (attributes) {
      handler(build, event, attributes);
      return;
    }
  }
}
