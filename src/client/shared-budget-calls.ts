/**
 * A client's view of the budgets its agent shares (`advanced.budgets.shared`): read one by
 * key, and raise it. Both talk to the budget's workflow (`workflows/budget/`).
 *
 * @module
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { BudgetMessages } from '../common/budget-messages.js';
import { capsProblems, type BudgetCaps } from '../common/budgets.js';
import { ConfigError } from '../common/errors.js';
import { sharedBudgetWorkflowId, type SharedBudgetStatus } from '../common/shared-budgets.js';

/**
 * The shared budget of `key` now (its spend and leases in the current window), or undefined
 * when no session has spent from it yet.
 */
export async function readSharedBudget(
  client: Client,
  key: string,
): Promise<SharedBudgetStatus | undefined> {
  try {
    const handle = client.workflow.getHandle(sharedBudgetWorkflowId(key));
    return await handle.query(BudgetMessages.status);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}

/**
 * Set caps of the shared budget of `key` for every session that spends from it (they hold
 * over the agents' own), recording `identity`.
 * @throws {ConfigError} for a bad cap (before anything is sent), or when no session has spent
 *   from the budget yet (its workflow does not exist).
 */
export async function raiseSharedBudget(
  client: Client,
  key: string,
  caps: BudgetCaps,
  identity: string | undefined,
): Promise<SharedBudgetStatus> {
  const problems = capsProblems(caps, 'caps');
  if (problems.length > 0) {
    throw new ConfigError(`Invalid raise of shared budget '${key}': ${problems.join('; ')}`);
  }
  try {
    const handle = client.workflow.getHandle(sharedBudgetWorkflowId(key));
    return await handle.executeUpdate(BudgetMessages.raise, {
      args: [{ caps, ...(identity !== undefined ? { identity } : {}) }],
    });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      throw new ConfigError(`No shared budget '${key}': no session has spent from it yet`);
    }
    throw error;
  }
}
