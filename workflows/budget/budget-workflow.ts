/**
 * The workflow that keeps one shared budget (`advanced.budgets.shared`): one per key,
 * started by the first lease asked of it (Update-with-Start), alive for good. Sessions lease
 * part of what is left by an Update whose id is the lease id, so a retried request is answered
 * once; the ledger is this workflow's state, so a crash of any worker loses nothing. It
 * continues as new as its history grows, carrying the ledger and the last answers. Workflow
 * code.
 *
 * @module
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  BudgetMessages,
  type SharedBudgetWorkflowInput,
} from '../../src/common/budget-messages.js';
import { capsProblems } from '../../src/common/budgets.js';
import {
  applyLease,
  newSharedBudget,
  raiseSharedCaps,
  sharedBudgetStatusOf,
} from '../../src/common/shared-budgets.js';
import { toFailure } from '../session/failures.js';

/** Updates after which a run continues as new (the server refuses the 2,001st of a run). */
const MAX_UPDATES_PER_RUN = 1000;

/** Keep the shared budget of `input.key`. */
export async function sharedBudgetWorkflow(input: SharedBudgetWorkflowInput): Promise<void> {
  const state = input.carry ?? newSharedBudget(input.key, input.window, Date.now());
  let updates = 0;
  setHandler(
    BudgetMessages.leases,
    (requests) => {
      updates++;
      return requests.map((request) => applyLease(state, request, Date.now()));
    },
    {
      validator: (requests) => {
        if (
          !Array.isArray(requests) ||
          requests.some((r) => r?.key !== state.key || typeof r.leaseId !== 'string')
        ) {
          throw toFailure({
            name: 'ConfigError',
            code: 'CONFIG_INVALID',
            message: `Requests to budget '${state.key}' must each name it and a lease id`,
          });
        }
      },
    },
  );
  setHandler(
    BudgetMessages.raise,
    (request) => {
      updates++;
      const identity =
        typeof request.identity === 'string' && request.identity !== ''
          ? request.identity
          : 'unknown';
      raiseSharedCaps(state, { caps: { ...request.caps }, identity, at: Date.now() });
      return sharedBudgetStatusOf(state, Date.now());
    },
    {
      validator: (request) => {
        const problems = capsProblems(request?.caps, 'caps');
        if (problems.length > 0) {
          throw toFailure({
            name: 'ConfigError',
            code: 'CONFIG_INVALID',
            message: `Invalid raise of budget '${state.key}': ${problems.join('; ')}`,
          });
        }
      },
    },
  );
  setHandler(BudgetMessages.status, () => sharedBudgetStatusOf(state, Date.now()));
  await condition(() => updates >= MAX_UPDATES_PER_RUN || workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  await continueAsNew<typeof sharedBudgetWorkflow>({
    key: state.key,
    ...(state.window !== undefined ? { window: state.window } : {}),
    carry: state,
  });
}
