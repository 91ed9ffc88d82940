/**
 * The `leaseSharedBudget` activity: a session's request to a shared budget (a lease, a lease
 * given back, or both), sent as an Update-with-Start to the budget's workflow, which is
 * started by the first request. The Update's id is the request's lease id, so a retried
 * attempt is answered once, with the same answer. No definition code runs: any worker may.
 *
 * @module
 */
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  BudgetMessages,
  SHARED_BUDGET_WORKFLOW,
  type SharedBudgetWorkflow,
} from '../src/common/budget-messages.js';
import type { LeaseSharedBudgetInput } from '../src/common/activity-io.js';
import { sharedBudgetWorkflowId, type LeaseAnswer } from '../src/common/shared-budgets.js';

/** The shared budget activities. */
export function createBudgetActivities() {
  return {
    /** Send `input.request` to its budget's workflow (starting it if none runs) and answer. */
    async leaseSharedBudget(input: LeaseSharedBudgetInput): Promise<LeaseAnswer> {
      const { request } = input;
      const client = Context.current().client;
      return client.workflow.executeUpdateWithStart(BudgetMessages.lease, {
        args: [request],
        updateId: request.leaseId,
        startWorkflowOperation: new WithStartWorkflowOperation<SharedBudgetWorkflow>(
          SHARED_BUDGET_WORKFLOW,
          {
            workflowId: sharedBudgetWorkflowId(request.key),
            taskQueue: input.taskQueue,
            args: [
              {
                key: request.key,
                ...(request.window !== undefined ? { window: request.window } : {}),
              },
            ],
            workflowIdConflictPolicy: 'USE_EXISTING',
          },
        ),
      });
    },
  };
}
