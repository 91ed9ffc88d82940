/**
 * A session's status as listings show it and filter by it (`durable-agent sessions`, the
 * session page, {@link AgentClient.listSessions}): its own search attribute
 * (`DurableAgentStatus`) while its workflow execution runs, Temporal's `ExecutionStatus` once
 * it does not. The attribute alone misleads: a workflow terminated, timed out or reset from
 * outside never updates it, so `DurableAgentStatus='running'` alone lists dead sessions.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import { STATUS_KEY, type SessionSearchStatus } from '../common/search-attributes.js';

/**
 * How Temporal ended a session's workflow execution other than by completing it, in lower
 * case: `failed`, `canceled`, `terminated` (a reset terminates the run it replaces),
 * `timed_out` (its execution or run timeout), `continued_as_new` (an earlier run of a
 * session that rolled over; the session goes on in a later run).
 */
export type SessionEndStatus =
  'failed' | 'canceled' | 'terminated' | 'timed_out' | 'continued_as_new';

/**
 * A session's status in a listing:
 * - while its workflow execution runs, its {@link SessionSearchStatus} (`running`,
 *   `awaiting_approval`, `cleaning_up`, `idle`; `closed` once SessionEnd ran);
 * - `closed` once the execution completed (the session closed itself: a close, an idle
 *   timeout, a failed start);
 * - else how Temporal ended it ({@link SessionEndStatus}).
 */
export type SessionListStatus = SessionSearchStatus | SessionEndStatus;

/** Every {@link SessionListStatus}, for validating a filter. */
export const SESSION_LIST_STATUSES: readonly SessionListStatus[] = [
  'running',
  'awaiting_approval',
  'cleaning_up',
  'idle',
  'closed',
  'failed',
  'canceled',
  'terminated',
  'timed_out',
  'continued_as_new',
];

/** Temporal's `ExecutionStatus` value (as visibility queries spell it) of each end status. */
const EXECUTION_STATUS_OF: Record<SessionEndStatus, string> = {
  failed: 'Failed',
  canceled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  continued_as_new: 'ContinuedAsNew',
};

/**
 * The status a listing shows for a session.
 * @param executionStatus Temporal's execution status as the client names it: `RUNNING`,
 *   `COMPLETED`, `FAILED`, `CANCELED` (or `CANCELLED`), `TERMINATED`, `TIMED_OUT`,
 *   `CONTINUED_AS_NEW`; any other (`UNSPECIFIED`) counts as running.
 * @param agentStatus the session's `DurableAgentStatus`, when the server has it.
 * @returns `undefined` for a running session without the attribute (a server without the
 *   session search attributes).
 */
export function sessionListStatus(
  executionStatus: string,
  agentStatus: SessionSearchStatus | undefined,
): SessionListStatus | undefined {
  switch (executionStatus) {
    case 'COMPLETED':
      return 'closed';
    case 'FAILED':
      return 'failed';
    case 'CANCELED':
    case 'CANCELLED':
      return 'canceled';
    case 'TERMINATED':
      return 'terminated';
    case 'TIMED_OUT':
      return 'timed_out';
    case 'CONTINUED_AS_NEW':
      return 'continued_as_new';
    default:
      return agentStatus;
  }
}

/**
 * The visibility query clause that lists the sessions {@link sessionListStatus} shows in
 * `status`: `ExecutionStatus = 'Running' AND DurableAgentStatus = 'running'` for a status of
 * a running session; `(ExecutionStatus = 'Completed' OR (ExecutionStatus = 'Running' AND
 * DurableAgentStatus = 'closed'))` for `closed`; `ExecutionStatus = 'Terminated'` (and so on)
 * for an end status.
 * @throws {ConfigError} for a value that is not a {@link SessionListStatus}, naming them.
 */
export function sessionStatusQuery(status: SessionListStatus): string {
  if (!(SESSION_LIST_STATUSES as readonly string[]).includes(status)) {
    throw new ConfigError(
      `status must be one of ${SESSION_LIST_STATUSES.join(', ')}, got '${String(status)}'`,
    );
  }
  const execution = EXECUTION_STATUS_OF[status as SessionEndStatus];
  if (execution !== undefined) return `ExecutionStatus = '${execution}'`;
  const running = `ExecutionStatus = 'Running' AND ${STATUS_KEY.name} = '${status}'`;
  return status === 'closed' ? `(ExecutionStatus = 'Completed' OR (${running}))` : running;
}
