/**
 * Why a cancelled activity was cancelled, for a hook callback's `abortSignal.reason`: the
 * reason `abort()` was called with (the very object in the process that called it, a rebuilt
 * Error with its message elsewhere). A session's `abortReason` query holds its running
 * prompt's abort record; a sub-agent cancelled by its parent holds only `askParent`, so the
 * lookup asks the parent's `subagentAbortReason` (the Task timeout or the parent's own
 * abort), and up the tree, one hop per level. Hook callbacks (`hook-dispatch.ts`) and
 * permission functions (`tool-exec.ts`) get it.
 *
 * @module
 */
import type { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { CancelledFailure, type QueryDefinition } from '@temporalio/common';
import { deserializeError } from '../src/common/errors.js';
import { Queries, type AbortRecord } from '../src/common/messages.js';
import { localAbortReason } from '../src/definition/registry.js';
import { QUERY_ATTEMPT_DEADLINE_MS } from '../src/temporal/query.js';

/**
 * The reason for the callbacks' signal when the activity `ctx` was cancelled: the workflow's
 * abort reason when the cancel came from an abort (followed up to `depth` parents), else the
 * activity's own cancellation reason (also when a query fails or finds nothing).
 * @param depth how many parents the session has (its lineage's `depth`; 0 for a top session).
 */
export async function abortReasonFor(ctx: Context, depth: number): Promise<unknown> {
  const reason = ctx.cancellationSignal.reason as unknown;
  const cancelType = reason instanceof CancelledFailure ? reason.message : String(reason);
  if (cancelType !== 'CANCELLED') return reason;
  const workflowId = ctx.info.workflowExecution?.workflowId;
  if (!workflowId) return reason;
  try {
    const record = await abortRecordOf(ctx.client, workflowId, depth);
    if (!record) return reason;
    const local = localAbortReason(record.abortId);
    return local.found ? local.reason : deserializeError(record.reason);
  } catch {
    return reason;
  }
}

/**
 * A signal that aborts once the activity `ctx` is cancelled, with {@link abortReasonFor}'s
 * reason: what a permission function is given, so it learns why as hook callbacks do. Call
 * `dispose` when the activity ends (it stops listening; the signal stays as it is).
 * @param depth how many parents the session has (its lineage's `depth`; 0 for a top session).
 */
export function abortSignalFor(
  ctx: Context,
  depth: number,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const cancelled = ctx.cancellationSignal;
  const onCancel = () => {
    void abortReasonFor(ctx, depth).then(
      (reason) => controller.abort(reason),
      () => controller.abort(cancelled.reason),
    );
  };
  if (cancelled.aborted) onCancel();
  else cancelled.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    dispose: () => cancelled.removeEventListener('abort', onCancel),
  };
}

/**
 * The abort record that stopped session `workflowId`'s prompt: its own, or, while it says
 * `askParent`, the one its parent answers for it, at most `depth` hops up. A parent that
 * knows none leaves the last record found.
 */
async function abortRecordOf(
  client: Client,
  workflowId: string,
  depth: number,
): Promise<AbortRecord | null> {
  let record = await ask(client, workflowId, Queries.abortReason);
  let asking = workflowId;
  for (let hop = 0; record?.askParent !== undefined && hop < depth; hop++) {
    const parent = record.askParent;
    const parents = await ask(client, parent, Queries.subagentAbortReason, asking);
    if (!parents) break;
    record = parents;
    asking = parent;
  }
  return record;
}

/** One query attempt, within the query deadline. */
function ask<T, A extends unknown[]>(
  client: Client,
  workflowId: string,
  query: QueryDefinition<T, A>,
  ...args: A
): Promise<T> {
  const deadline = Date.now() + QUERY_ATTEMPT_DEADLINE_MS;
  return client.connection.withDeadline(deadline, () =>
    client.workflow.getHandle(workflowId).query(query, ...args),
  );
}
