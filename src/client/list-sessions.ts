/**
 * Listing the sessions of a namespace: one {@link SessionSummary} a session, read from the
 * raw visibility listing and the session search attributes.
 *
 * @module
 */
import proto from '@temporalio/proto';
import { optionalTsToDate } from '@temporalio/common/lib/time.js';
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import { ConfigError } from '../common/errors.js';
import { SESSION_WORKFLOW, sessionIdOfWorkflowId } from '../common/workflow-io.js';
import {
  AGENT_NAME_KEY,
  LAST_DECISION_KEY,
  PENDING_APPROVALS_KEY,
  STATUS_KEY,
  searchAttributeCreateCommand,
  type SessionSearchStatus,
} from '../common/search-attributes.js';
import { isMissingSearchAttribute } from './search-attributes.js';
import { sessionListStatus, sessionStatusQuery, type SessionListStatus } from './session-status.js';

/** One row of {@link AgentClient.listSessions}. */
export interface SessionSummary {
  /** The session's id. */
  sessionId: string;
  /** The session's workflow id, `session-<sessionId>`. */
  workflowId: string;
  /** Temporal's execution status: `RUNNING`, `COMPLETED`, `FAILED`, `CANCELED`, `TERMINATED`, ... */
  status: string;
  /** When the session's workflow started. */
  startTime: Date;
  /** When it closed; `undefined` while it runs. */
  closeTime: Date | undefined;
  /** The agent's name (search attribute `DurableAgentName`; absent on a server without them). */
  agentName?: string;
  /**
   * The session's own status (search attribute `DurableAgentStatus`), e.g.
   * `awaiting_approval`, as the workflow last set it: a workflow terminated, timed out or
   * reset from outside keeps its last value (often `running`). See `sessionStatus`.
   */
  agentStatus?: SessionSearchStatus;
  /**
   * The session's status from both: `agentStatus` while the workflow execution runs,
   * `closed` once it completed, else how Temporal ended it (`terminated`, `timed_out`,
   * `failed`, `canceled`, `continued_as_new`). Absent for a running session on a server
   * without the session search attributes.
   */
  sessionStatus?: SessionListStatus;
  /** Permission requests waiting for a person (`DurableAgentPendingApprovals`). */
  pendingApprovals?: number;
  /** The last hook outcome or permission answer (`DurableAgentLastDecision`). */
  lastDecision?: string;
}

/** Which sessions `client.listSessions` lists, by their search attributes. */
export interface SessionFilter {
  /**
   * Only sessions whose `sessionStatus` is this: a status of a running session (`running`,
   * `awaiting_approval`, `cleaning_up`, `idle`) matches `DurableAgentStatus` of running
   * workflow executions only (`ExecutionStatus = 'Running' AND DurableAgentStatus =
   * 'running'`), `closed` completed ones, `terminated` (and the other end statuses)
   * Temporal's `ExecutionStatus`.
   */
  status?: SessionListStatus;
  /** Only sessions of the agent of this name (`DurableAgentName`). */
  agentName?: string;
  /** Only sessions started on this task queue (Temporal's own `TaskQueue` attribute). */
  taskQueue?: string;
}

/**
 * Sessions of the client's namespace (workflows of type `sessionWorkflow`), newest first,
 * those of `filter` only (`taskQueue`: those started on that task queue, one agent's).
 * @throws {ConfigError} for a status of a running session or an agent filter on a server
 *   without the session search attributes (naming the command that registers them), or an
 *   unknown status.
 */
export async function listSessionSummaries(
  client: Client,
  limit: number,
  filter: SessionFilter = {},
): Promise<SessionSummary[]> {
  const query = [
    `WorkflowType = '${SESSION_WORKFLOW}'`,
    ...(filter.status !== undefined ? [sessionStatusQuery(filter.status)] : []),
    ...(filter.agentName !== undefined
      ? [`${AGENT_NAME_KEY.name} = ${quoted(filter.agentName)}`]
      : []),
    ...(filter.taskQueue !== undefined ? [`TaskQueue = ${quoted(filter.taskQueue)}`] : []),
  ].join(' AND ');
  const rows: SessionSummary[] = [];
  // The raw listing, not `client.workflow.list()`: that one decodes every memo, and one
  // session encrypted under a key this process lacks would end the whole list. A summary
  // needs no memo.
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService
      .listWorkflowExecutions({
        namespace: client.options.namespace,
        query,
        pageSize: Math.min(limit, 1000),
        ...(nextPageToken ? { nextPageToken } : {}),
      })
      .catch((error: unknown) => {
        if (!isMissingSearchAttribute(error)) throw error;
        throw new ConfigError(
          `Namespace '${client.options.namespace}' has no session search attributes, so ` +
            `sessions cannot be listed by status or agent. Register them once with: ` +
            searchAttributeCreateCommand(client.options.namespace),
        );
      });
    for (const execution of page.executions ?? []) {
      const workflowId = execution.execution?.workflowId ?? '';
      const row: SessionSummary = {
        sessionId: sessionIdOfWorkflowId(workflowId) ?? workflowId,
        workflowId,
        status: statusName(execution.status),
        startTime: optionalTsToDate(execution.startTime) ?? new Date(0),
        closeTime: optionalTsToDate(execution.closeTime),
        ...searchAttributesOf(execution.searchAttributes?.indexedFields),
      };
      const sessionStatus = sessionListStatus(row.status, row.agentStatus);
      rows.push(sessionStatus !== undefined ? { ...row, sessionStatus } : row);
      if (rows.length >= limit) return rows;
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return rows;
}

/** `RUNNING`, `COMPLETED`, ...: Temporal's status enum name without its prefix. */
function statusName(status: number | null | undefined): string {
  const name = proto.temporal.api.enums.v1.WorkflowExecutionStatus[status ?? 0] ?? 'UNSPECIFIED';
  return name.replace(/^WORKFLOW_EXECUTION_STATUS_/, '');
}

/** A string in a visibility query, single quotes escaped. */
function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The session search attributes of a listed execution, those it has. */
function searchAttributesOf(
  fields: Record<string, proto.temporal.api.common.v1.IPayload> | null | undefined,
): Pick<SessionSummary, 'agentName' | 'agentStatus' | 'pendingApprovals' | 'lastDecision'> {
  if (!fields) return {};
  const held = decodeTypedSearchAttributes(fields as Record<string, Payload>);
  const agentName = held.get(AGENT_NAME_KEY);
  const agentStatus = held.get(STATUS_KEY);
  const pendingApprovals = held.get(PENDING_APPROVALS_KEY);
  const lastDecision = held.get(LAST_DECISION_KEY);
  return {
    ...(agentName !== undefined ? { agentName } : {}),
    ...(agentStatus !== undefined ? { agentStatus: agentStatus as SessionSearchStatus } : {}),
    ...(pendingApprovals !== undefined ? { pendingApprovals } : {}),
    ...(lastDecision !== undefined ? { lastDecision } : {}),
  };
}
