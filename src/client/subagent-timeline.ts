/**
 * The hook dispatches of the sub-agents a session's `Task` calls started, and theirs, for
 * `Session.timeline({ subagents: true })`.
 *
 * @module
 */
import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import { Queries } from '../common/messages.js';
import type { TimelineEntry } from '../common/workflow-io.js';
import { childrenOf, type SessionQueryRunner } from './pending-tree.js';

/**
 * The dispatches of the sub-agents of the run `handle` (those it started and still lists:
 * running ones and its last 100 finished), and of theirs down to `depthLeft` levels, each
 * tagged with the `sessionId` and `agentPath` of the sub-agent it ran in, in each
 * sub-agent's order. A sub-agent is one run, so its timeline is one query, answered by its
 * run (closed ones replay for it).
 * @throws what a query throws (no worker, a deadline); a worker that predates the `children`
 *   query counts as a session without sub-agents.
 */
export async function subagentTimelines(
  workflows: WorkflowClient,
  handle: WorkflowHandle,
  depthLeft: number,
  query: SessionQueryRunner,
): Promise<TimelineEntry[]> {
  if (depthLeft <= 0) return [];
  const children = await childrenOf(handle, query);
  const timelines = await Promise.all(
    children.map(async (child) => {
      const childHandle = workflows.getHandle(child.workflowId);
      const [own, below] = await Promise.all([
        query(childHandle, Queries.timeline),
        subagentTimelines(workflows, childHandle, depthLeft - 1, query),
      ]);
      const tag = { sessionId: child.sessionId, agentPath: child.agentPath };
      return [...own.map((entry) => ({ ...entry, ...tag })), ...below];
    }),
  );
  return timelines.flat();
}

/**
 * `session` with `subagents` merged in by when each dispatch started: a sub-agent's entries
 * fall between its `Task` call's PreToolUse and PostToolUse. A stable order: entries that
 * started at the same time keep the session's first, then each sub-agent's own order.
 */
export function mergeByStart(
  session: readonly TimelineEntry[],
  subagents: readonly TimelineEntry[],
): TimelineEntry[] {
  return [...session, ...subagents].sort((a, b) => a.startedAt - b.startedAt);
}
