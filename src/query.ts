/**
 * Workflow queries with a deadline: a query that reaches a run as it continues as new can be
 * left unanswered (Temporal's time-skipping test server never answers it), so each attempt
 * gets a deadline and the query is asked again, up to three times.
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';

/** How long one attempt of a query may take, ms. */
const QUERY_ATTEMPT_DEADLINE_MS = 10_000;
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
      const timedOut = Date.now() >= deadline - 100 && isCancelledCall(error);
      if (attempt >= ATTEMPTS || !timedOut) throw error;
    }
  }
}

function isCancelledCall(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (code === 1 || code === 4) return true; // gRPC CANCELLED, DEADLINE_EXCEEDED
  }
  return false;
}
