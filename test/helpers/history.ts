/**
 * Reading a session's workflow history in tests, to wait on what the workflow has recorded
 * (an Update accepted, an Update completed) instead of sleeping.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { HistoryDispatch } from '../../src/history/timeline-types.js';
import { rawClient, waitFor } from './common.js';

/** One Update as the history records it. */
export interface RecordedUpdate {
  /** The Update's name (`send`, `abort`, `close`, ...). */
  name: string;
  /** Its id: a `send()`'s `requestId`, an abort's id, a random id for `close()`. */
  updateId: string;
  /** Whether its completion is recorded too. */
  completed: boolean;
}

/** The Updates the workflow accepted so far, in the order it accepted them. */
export async function recordedUpdates(
  client: Client,
  workflowId: string,
): Promise<RecordedUpdate[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const updates: RecordedUpdate[] = [];
  const byId = new Map<string, RecordedUpdate>();
  for (const event of history.events ?? []) {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted) {
      const update: RecordedUpdate = {
        name: accepted.acceptedRequest?.input?.name ?? '',
        updateId: accepted.acceptedRequest?.meta?.updateId ?? '',
        completed: false,
      };
      updates.push(update);
      byId.set(update.updateId, update);
    }
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    const done = completed?.meta?.updateId ? byId.get(completed.meta.updateId) : undefined;
    if (done) done.completed = true;
  }
  return updates;
}

/**
 * Wait until the history of `workflowId` holds Updates matching `predicate` (e.g. a send
 * accepted, so it is queued in the workflow), polling with a bound.
 */
export async function waitForUpdates(
  workflowId: string,
  predicate: (updates: RecordedUpdate[]) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<RecordedUpdate[]> {
  const client = await rawClient();
  try {
    let last: RecordedUpdate[] = [];
    await waitFor(
      async () => predicate((last = await recordedUpdates(client, workflowId))),
      timeoutMs,
      what,
    );
    return last;
  } finally {
    await client.connection.close();
  }
}

/** Wait until the workflow accepted the `send()` whose `requestId` is given (it is queued). */
export function waitForSendAccepted(workflowId: string, requestId: string): Promise<unknown> {
  return waitForUpdates(
    workflowId,
    (updates) => updates.some((u) => u.name === 'send' && u.updateId === requestId),
    `send ${requestId} to be accepted`,
  );
}

/** The history of the workflow `workflowId` (its newest run), read by a client of its own. */
export async function historyOf(workflowId: string) {
  const client = await rawClient();
  try {
    return await client.workflow.getHandle(workflowId).fetchHistory();
  } finally {
    await client.connection.close();
  }
}

/**
 * The recorded start of an activity's `attempt` (Temporal records a retried activity's last
 * attempt only, with the failure of the one before as its `lastFailure`), or undefined.
 */
export function startedAttempt(
  history: Awaited<ReturnType<typeof historyOf>>,
  attempt: number,
): temporal.api.history.v1.IActivityTaskStartedEventAttributes | undefined {
  return (
    (history.events ?? [])
      .map((e) => e.activityTaskStartedEventAttributes)
      .find((started) => (started?.attempt ?? 1) === attempt) ?? undefined
  );
}

/**
 * A dispatch row without what differs between two sessions of the same script (ids, event
 * ids, times) or marks it inline: what an inline dispatch's rows are compared on with the
 * default dispatch's.
 */
export function comparableRow(dispatch: HistoryDispatch) {
  const {
    inline: _inline,
    dispatchId: _dispatchId,
    scheduledEventId: _scheduled,
    closedEventId: _closed,
    scheduledAt: _at,
    durationMs: _duration,
    callbacks,
    ...rest
  } = dispatch;
  return { ...rest, callbacks: callbacks?.map(({ durationMs: _ms, ...callback }) => callback) };
}
