/**
 * Workflow queries with a deadline: a query that reaches a run as it continues as new can be
 * left unanswered (Temporal's time-skipping test server never answers it), so each attempt
 * gets a deadline and the query is asked again, up to three times.
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { EngineError, causeChain } from '../common/errors.js';

/** How long one attempt of a query may take, ms. */
export const QUERY_ATTEMPT_DEADLINE_MS = 10_000;
const ATTEMPTS = 3;

/**
 * `handle.query(query, ...args)`, each attempt bounded by {@link QUERY_ATTEMPT_DEADLINE_MS}.
 * @param query one of the session workflow's `Queries`: it types the arguments and answer.
 * @throws what the query throws; the deadline error after the third attempt.
 */
export async function queryWithDeadline<T, A extends unknown[] = []>(
  handle: WorkflowHandle,
  query: QueryDefinition<T, A>,
  ...args: NoInfer<A>
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const deadline = Date.now() + QUERY_ATTEMPT_DEADLINE_MS;
    try {
      return await handle.client.connection.withDeadline(deadline, () =>
        handle.query(query, ...args),
      );
    } catch (error) {
      // The client ends a call at its deadline as CANCELLED or DEADLINE_EXCEEDED.
      const noPoller = isNoPollerError(error);
      const timedOut = Date.now() >= deadline - 100 && isCancelledCall(error);
      if (!noPoller && !timedOut) throw error;
      // Only a worker answers a query: say so when none polls the session's task queue.
      const queue = await pollerlessQueue(handle);
      if (noPoller || queue !== undefined || attempt >= ATTEMPTS) {
        throw noWorkerError(handle, queue, attempt * QUERY_ATTEMPT_DEADLINE_MS, error);
      }
    }
  }
}

/**
 * Whether Temporal refused a query because no worker polls the workflow's task queue (gRPC
 * FAILED_PRECONDITION, "no poller seen for task queue recently"): only a worker can answer one.
 */
export function isNoPollerError(error: unknown): boolean {
  return causeChain(error).some(
    (e) => e instanceof Error && grpcCode(e) === 9 && /no poller/i.test(e.message),
  );
}

function noWorkerError(
  handle: WorkflowHandle,
  queue: string | undefined,
  waitedMs: number,
  cause: unknown,
): EngineError {
  const why =
    queue !== undefined
      ? `no worker polls its task queue '${queue}'`
      : `no worker answered within ${Math.round(waitedMs / 1000)} s`;
  return new EngineError(
    'WORKER_UNAVAILABLE',
    `No answer from session workflow '${handle.workflowId}': ${why} (only the agent's worker ` +
      "can answer a query); start the agent's worker (createAgent or createAgentWorker on the " +
      "session's task queue) and try again",
    { cause },
  );
}

/** The workflow's task queue when no worker polls it; undefined when one does (or unknown). */
async function pollerlessQueue(handle: WorkflowHandle): Promise<string | undefined> {
  const { client } = handle;
  try {
    return await client.connection.withDeadline(Date.now() + 2_000, async () => {
      const { taskQueue } = await handle.describe();
      const { pollers } = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: WORKFLOW_TASK_QUEUE,
      });
      return (pollers ?? []).length === 0 ? taskQueue : undefined;
    });
  } catch {
    return undefined;
  }
}

/** `TASK_QUEUE_TYPE_WORKFLOW` of Temporal's API. */
const WORKFLOW_TASK_QUEUE = 1;

function isCancelledCall(error: unknown): boolean {
  // gRPC CANCELLED, DEADLINE_EXCEEDED
  return causeChain(error).some((e) => e instanceof Error && [1, 4].includes(grpcCode(e) ?? -1));
}

function grpcCode(error: Error): number | undefined {
  const { code } = error as { code?: unknown };
  return typeof code === 'number' ? code : undefined;
}

/**
 * Whether a call ended at a deadline or was cancelled: gRPC `DEADLINE_EXCEEDED` or `CANCELLED`
 * anywhere in its cause chain, or Temporal's `WorkflowUpdateRPCTimeoutOrCancelledError` (how
 * the client ends a call at the deadline of `connection.withDeadline`).
 */
export function isCallTimeout(error: unknown): boolean {
  return causeChain(error).some((e) => {
    const { code, name } = e as { code?: unknown; name?: unknown };
    return code === 4 || code === 1 || name === 'WorkflowUpdateRPCTimeoutOrCancelledError';
  });
}
