/**
 * Workflow queries with a deadline: a query that reaches a run as it continues as new can be
 * left unanswered (Temporal's time-skipping test server never answers it), so each attempt
 * gets a deadline and the query is asked again, up to three times.
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';

/** How long one attempt of a query may take, ms. */
export const QUERY_ATTEMPT_DEADLINE_MS = 10_000;
const ATTEMPTS = 3;

/**
 * `handle.query(name, ...args)`, each attempt bounded by {@link QUERY_ATTEMPT_DEADLINE_MS}.
 * @throws what the query throws; the deadline error after the third attempt.
 */
export async function queryWithDeadline<T, A extends unknown[] = []>(
  handle: WorkflowHandle,
  name: string,
  ...args: A
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await handle.client.connection.withDeadline(
        Date.now() + QUERY_ATTEMPT_DEADLINE_MS,
        () => handle.query<T, A>(name, ...args),
      );
    } catch (error) {
      if (attempt >= ATTEMPTS || !isDeadlineExceeded(error)) throw error;
    }
  }
}

function isDeadlineExceeded(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if ((e as { code?: unknown }).code === 4) return true; // gRPC DEADLINE_EXCEEDED
    if (/DEADLINE_EXCEEDED|deadline exceeded/i.test(e.message)) return true;
  }
  return false;
}
