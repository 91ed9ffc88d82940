/**
 * The permission events the workflow makes for a send's live stream, on their way out.
 * Every permission decision is made here, in workflow code (a preset's at once, the
 * function's from its activity's result, a person's from the `decidePermission` Update), so
 * no activity publishes it as it happens. Rather than run an activity per event, the
 * workflow queues them, and the send's next activity (a hook dispatch, the permission
 * check, the tool execution, the model step) carries them in its input (`streamEvents`)
 * and publishes them before its own events: a preset's `allow` rides on the `executeTool`
 * that follows it, a denial on the next step. No activity, Update or query is added for
 * them, and no text delta is recorded (issue 18, item 2).
 *
 * Only when nothing of the send follows soon does a local activity publish what is queued
 * (one marker in history, no task round trip): when a person is asked (they may answer in
 * hours, and a UI needs the ask now), and when the send ends with events still queued (a
 * denial with `interrupt`, or the last turn). Workflow code.
 *
 * @module
 */
import { CancellationScope } from '@temporalio/workflow';
import type { WorkflowStreamEvent } from '../../src/common/permission-events.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { publishStreamEventsActivity } from '../activity-options.js';

/** The session state the outbox lives in. */
export interface StreamOutboxState {
  readonly input: SessionWorkflowInput;
  /** Events not published yet, per send (request id), oldest first. Absent until the first. */
  streamOutbox?: Map<string, WorkflowStreamEvent[]>;
}

/** Queue `event` for the stream of the send `requestId` (none: no send, nothing queued). */
export function queueStreamEvent(
  state: StreamOutboxState,
  requestId: string | undefined,
  event: WorkflowStreamEvent,
): void {
  if (requestId === undefined) return;
  state.streamOutbox ??= new Map();
  const queued = state.streamOutbox.get(requestId);
  if (queued) queued.push(event);
  else state.streamOutbox.set(requestId, [event]);
}

/**
 * The queued events of the send `requestId`, as an activity input's field (`{}` when none),
 * taken out of the queue: the activity they go with publishes them.
 */
export function takeStreamEvents(
  state: StreamOutboxState,
  requestId: string | undefined,
): { streamEvents?: WorkflowStreamEvent[] } {
  if (requestId === undefined) return {};
  const events = state.streamOutbox?.get(requestId);
  if (!events) return {};
  state.streamOutbox!.delete(requestId);
  return { streamEvents: events };
}

/**
 * Publish the queued events of the send `requestId` now, with the local activity (a person is
 * asked, or the send ends). Never throws but a cancellation of the whole workflow: the stream
 * is best effort.
 * @returns false when nothing was published (nothing queued).
 */
export async function publishQueuedNow(
  state: StreamOutboxState,
  requestId: string | undefined,
): Promise<boolean> {
  if (requestId === undefined) return false;
  const events = state.streamOutbox?.get(requestId);
  if (!events || events.length === 0) return false;
  state.streamOutbox!.delete(requestId);
  const { agentName, sessionId, lineage } = state.input;
  try {
    // Not cancellable: an abort arriving now must not drop what was already decided.
    await CancellationScope.nonCancellable(() =>
      publishStreamEventsActivity(summaryOf(events))({
        agentName,
        sessionId,
        requestId,
        events,
        // A sub-agent's events go to its top session's send stream.
        ...(lineage ? { lineage } : {}),
      }),
    );
  } catch {
    // A worker without the activity (an older release) or a slow transport: the stream
    // misses these events, the session does not.
  }
  return true;
}

/** The local activity's summary in history: how many events, of which kind. */
function summaryOf(events: WorkflowStreamEvent[]): string {
  const tools = events.some((event) => event.type === 'tool-start' || event.type === 'tool-end');
  return `stream: ${events.length} ${tools ? '' : 'permission '}event(s)`;
}

/** Whether the send `requestId` has events queued for its stream. */
export function hasQueuedStreamEvents(state: StreamOutboxState, requestId: string): boolean {
  return (state.streamOutbox?.get(requestId)?.length ?? 0) > 0;
}

/** The send `requestId` ended: publish what is still queued, and forget the rest. */
export async function closeStreamOutbox(
  state: StreamOutboxState,
  requestId: string,
): Promise<void> {
  await publishQueuedNow(state, requestId);
  state.streamOutbox?.delete(requestId);
}
