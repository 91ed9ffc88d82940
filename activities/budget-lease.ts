/**
 * The `leaseSharedBudget` activity: a session's request to a shared budget (a lease, a lease
 * given back, or both), sent as an Update-with-Start to the budget's workflow, which is
 * started by the first request. No definition code runs: any worker may.
 *
 * The requests of this process to one budget go together: while one Update is in flight, the
 * requests that arrive wait and go in the next one, a batch. A budget's workflow takes at most
 * ten Updates in flight at once (Temporal's `history.maxInFlightUpdates`) and refuses the
 * rest; a hundred sessions asking at once would otherwise be refused and retried in turn. The
 * budget answers each request by its lease id once (its ledger keeps the answers), so a retried
 * attempt, in whatever batch, gets the answer the first one got.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import {
  BudgetMessages,
  SHARED_BUDGET_WORKFLOW,
  type SharedBudgetWorkflow,
} from '../src/common/budget-messages.js';
import type { LeaseSharedBudgetInput } from '../src/common/activity-io.js';
import {
  sharedBudgetWorkflowId,
  type LeaseAnswer,
  type LeaseRequest,
} from '../src/common/shared-budgets.js';

/** A request waiting for its batch. */
interface Waiting {
  request: LeaseRequest;
  resolve: (answer: LeaseAnswer) => void;
  reject: (error: unknown) => void;
}

/** One budget's requests from this process: the batch in flight, and those waiting for the next. */
interface Batcher {
  inFlight: boolean;
  waiting: Waiting[];
}

/** The shared budget activities. */
export function createBudgetActivities() {
  const batchers = new Map<string, Batcher>();

  /** Send the waiting requests of `key` as one Update, then the next batch, until none wait. */
  async function flush(client: Client, key: string, taskQueue: string, batcher: Batcher) {
    batcher.inFlight = true;
    while (batcher.waiting.length > 0) {
      const batch = batcher.waiting.splice(0);
      try {
        const answers = await client.workflow.executeUpdateWithStart(BudgetMessages.leases, {
          args: [batch.map((w) => w.request)],
          updateId: `batch-${randomUUID()}`,
          startWorkflowOperation: new WithStartWorkflowOperation<SharedBudgetWorkflow>(
            SHARED_BUDGET_WORKFLOW,
            {
              workflowId: sharedBudgetWorkflowId(key),
              taskQueue,
              args: [
                {
                  key,
                  ...(batch[0]!.request.window !== undefined
                    ? { window: batch[0]!.request.window }
                    : {}),
                },
              ],
              workflowIdConflictPolicy: 'USE_EXISTING',
            },
          ),
        });
        batch.forEach((w, i) => w.resolve(answers[i]!));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    batcher.inFlight = false;
  }

  return {
    /** Send `input.request` to its budget's workflow (starting it if none runs) and answer. */
    async leaseSharedBudget(input: LeaseSharedBudgetInput): Promise<LeaseAnswer> {
      const { request } = input;
      const client = Context.current().client;
      const key = request.key;
      let batcher = batchers.get(key);
      if (!batcher) batchers.set(key, (batcher = { inFlight: false, waiting: [] }));
      const answer = new Promise<LeaseAnswer>((resolve, reject) =>
        batcher.waiting.push({ request, resolve, reject }),
      );
      if (!batcher.inFlight) void flush(client, key, input.taskQueue, batcher);
      return answer;
    },
  };
}
