/**
 * The session's `raiseBudget` Update: a person sets caps of the session's budget. A prompt that
 * ended `budget_exceeded` stays ended; the next `send()` runs under the raised caps. Workflow
 * code.
 *
 * @module
 */
import { capsProblems, raiseCaps, budgetStatusOf } from '../../src/common/budgets.js';
import { Updates } from '../../src/common/messages.js';
import { toFailure } from '../session/failures.js';
import type { SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';

/** Register the `raiseBudget` Update (and its validator). */
export function setBudgetHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  setHandler(
    Updates.raiseBudget,
    (request) => {
      state.activitySeq++;
      const ledger = state.budget!;
      raiseCaps(ledger, {
        caps: { ...request.caps },
        // Temporal does not hand the workflow the Update's identity: the client says it.
        identity:
          typeof request.identity === 'string' && request.identity !== ''
            ? request.identity
            : 'unknown',
        at: Date.now(),
      });
      return budgetStatusOf(ledger);
    },
    {
      // Refused before it is accepted: nothing is recorded.
      validator: (request) => {
        if (!state.budget) {
          throw toFailure({
            name: 'ConfigError',
            code: 'CONFIG_INVALID',
            message: `Session '${state.input.sessionId}' has no budget to raise`,
          });
        }
        const problems = [
          ...capsProblems(request?.caps, 'caps'),
          ...(request?.caps?.costUsd !== undefined && !state.input.budget?.price
            ? ['caps.costUsd needs a price for the agent model (advanced.budgets.prices)']
            : []),
        ];
        if (problems.length > 0) {
          throw toFailure({
            name: 'ConfigError',
            code: 'CONFIG_INVALID',
            message: `Invalid raiseBudget: ${problems.join('; ')}`,
          });
        }
      },
    },
  );
}
