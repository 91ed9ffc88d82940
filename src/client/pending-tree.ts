/**
 * The permission requests that wait for a person in a session and in the sub-agents it runs
 * ({@link pendingTree}), and which session an answer to one goes to ({@link routeOfRequest}).
 * The session client, the CLI and the session page share both.
 *
 * @module
 */
import {
  QueryNotRegisteredError,
  type Client,
  type WorkflowClient,
  type WorkflowHandle,
} from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { Queries, type ChildRunInfo } from '../common/messages.js';
import type { PendingPermission } from '../common/permission.js';
import { ROOT_AGENT_PATH } from '../common/subagents.js';
import { sessionIdOf, sessionWorkflowId } from '../common/workflow-io.js';

/**
 * The deepest sub-agents {@link pendingTree} reads under a session: the largest
 * `advanced.subagents.maxDepth`.
 */
export const PENDING_TREE_DEPTH = 4;

/** Runs one query of one session workflow; the caller bounds it. */
export type SessionQueryRunner = <T>(
  handle: WorkflowHandle,
  query: QueryDefinition<T, []>,
) => Promise<T>;

/** Options of {@link pendingTree}. */
interface PendingTreeOptions {
  /**
   * The session at the top of the tree, as its own requests are tagged.
   * @default the workflow id without `session-`, path `main`
   */
  root?: { sessionId: string; agentPath: string };
  /** Runs each query. @default `handle.query(query)` */
  query?: SessionQueryRunner;
}

/**
 * The requests waiting for a person in session workflow `workflowId` and in its running
 * sub-agents, theirs down to `depthLeft` levels (0: the session's own only), each tagged
 * with the `sessionId` and `agentPath` of the session that asks, oldest first. Every session
 * read is a query its worker answers. `client`: a Temporal client or its workflow client.
 * @throws what a query throws (no worker, a deadline); a session whose worker predates the
 *   `children` query counts as having no sub-agents.
 */
export async function pendingTree(
  client: Client | WorkflowClient,
  workflowId: string,
  depthLeft: number,
  options: PendingTreeOptions = {},
): Promise<PendingPermission[]> {
  const query = options.query ?? ((handle, definition) => handle.query(definition));
  const root = options.root ?? { sessionId: sessionIdOf(workflowId), agentPath: ROOT_AGENT_PATH };
  const found: PendingPermission[] = [];
  const workflows = 'workflow' in client ? client.workflow : client;
  await collect({ workflows, query, found }, workflowId, root, depthLeft);
  // A stable sort: requests asked at the same time keep the tree's order, parent first.
  return found.sort((a, b) => a.askedAt - b.askedAt);
}

/** What every level of {@link pendingTree} shares. */
interface TreeRead {
  workflows: WorkflowClient;
  query: SessionQueryRunner;
  found: PendingPermission[];
}

async function collect(
  read: TreeRead,
  workflowId: string,
  at: { sessionId: string; agentPath: string },
  depthLeft: number,
): Promise<void> {
  const handle = read.workflows.getHandle(workflowId);
  const [requests, children] = await Promise.all([
    read.query(handle, Queries.pendingPermissions),
    depthLeft > 0 ? childrenOf(handle, read.query) : Promise.resolve([]),
  ]);
  for (const request of requests) {
    read.found.push({ ...request, sessionId: at.sessionId, agentPath: at.agentPath });
  }
  const running = children.filter((child) => child.status === 'running');
  await Promise.all(
    running.map((child) =>
      collect(
        read,
        child.workflowId,
        { sessionId: child.sessionId, agentPath: child.agentPath },
        depthLeft - 1,
      ),
    ),
  );
}

/** The session's sub-agents (`children` query); none when its worker does not know the query. */
export async function childrenOf(
  handle: WorkflowHandle,
  query: SessionQueryRunner,
): Promise<ChildRunInfo[]> {
  try {
    return await query(handle, Queries.children);
  } catch (error) {
    if (error instanceof QueryNotRegisteredError) return [];
    throw error;
  }
}

/** The sub-agent session an answer goes to (see {@link routeOfRequest}). */
interface RequestRoute {
  sessionId: string;
  /** `session-<sessionId>`. */
  workflowId: string;
}

/**
 * Where the answer to `requestId`, given through session `sessionId`, goes: a sub-agent's
 * request id is `<its session id>#<uuid>`; when that session is a descendant of `sessionId`
 * (its id is `<sessionId>/<step>-<toolUseId>`, nested as deep as it goes), its route.
 * `undefined` for any other id, a plain id or another session's: the answer goes to
 * `sessionId` itself, as for a session without sub-agents (which refuses an id it does not
 * know). Pure.
 */
export function routeOfRequest(sessionId: string, requestId: string): RequestRoute | undefined {
  const at = requestId.lastIndexOf('#');
  if (at <= 0) return undefined;
  const owner = requestId.slice(0, at);
  const prefix = `${sessionId}/`;
  // The first level under the session is `<model step>-<toolUseId>`.
  if (!owner.startsWith(prefix) || !/^\d+-./.test(owner.slice(prefix.length))) return undefined;
  return { sessionId: owner, workflowId: sessionWorkflowId(owner) };
}
