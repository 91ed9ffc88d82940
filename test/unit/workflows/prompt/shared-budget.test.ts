/**
 * The session's side of shared budgets without Temporal: what hook inputs are told is left,
 * which leases go back when a prompt ends, and what a step charges. Plain session state.
 */
import { describe, expect, it } from 'vitest';
import { newLedger, type BudgetLedger } from '../../../../src/common/budgets.js';
import { zeroAmounts } from '../../../../src/common/shared-budgets.js';
import type { SessionWorkflowInput } from '../../../../src/common/workflow-io.js';
import {
  chargeSharedStep,
  hasIdleReturns,
  holdsLeases,
  sharedRemaining,
} from '../../../../workflows/prompt/shared-budget.js';

const spec = {
  caps: {},
  maxOutputTokens: 20,
  price: { inputUsdPerMillion: 1, outputUsdPerMillion: 2 },
  shared: [{ key: 'tenant:acme', caps: { modelCalls: 10, costUsd: 1 } }],
};

function stateWith(ledger: BudgetLedger) {
  return {
    input: { sessionId: 's1', taskQueue: 'q', budget: spec } as unknown as SessionWorkflowInput,
    budget: ledger,
    taskQueue: 'q',
  };
}

describe("a session's leases", () => {
  it('tell hook inputs what is left: the budget besides the lease, plus what the lease holds', () => {
    const ledger = newLedger(spec);
    expect(sharedRemaining(ledger)).toBeUndefined();
    ledger.leases = {
      'tenant:acme': {
        id: 's1/r/1',
        granted: { modelCalls: 4, costUsd: 0.4 },
        spent: { ...zeroAmounts(), modelCalls: 1, costUsd: 0.1 },
        returnAtIdle: false,
        left: { modelCalls: 6, costUsd: 0.6 },
      },
    };
    expect(sharedRemaining(ledger)).toEqual({ 'tenant:acme': { modelCalls: 9, costUsd: 0.9 } });
  });

  it('charge a step to every lease held, priced; only near-cap leases or owed requests go back at idle', () => {
    const ledger = newLedger(spec);
    const state = stateWith(ledger);
    expect(holdsLeases(state)).toBe(false);
    ledger.leases = {
      'tenant:acme': {
        id: 'x',
        granted: { modelCalls: 4 },
        spent: zeroAmounts(),
        returnAtIdle: false,
      },
    };
    expect(holdsLeases(state)).toBe(true);
    expect(hasIdleReturns(state)).toBe(false);
    chargeSharedStep(state, { inputTokens: 100, outputTokens: 50, totalTokens: 150 });
    expect(ledger.leases['tenant:acme']!.spent).toMatchObject({
      modelCalls: 1,
      totalTokens: 150,
      costUsd: 0.0002,
    });
    ledger.leases['tenant:acme']!.returnAtIdle = true;
    expect(hasIdleReturns(state)).toBe(true);
    ledger.leases = {};
    ledger.pendingLeases = {
      'tenant:acme': { key: 'tenant:acme', sessionId: 's1', leaseId: 'y', caps: {} },
    };
    expect(hasIdleReturns(state)).toBe(true);
    expect(holdsLeases(state)).toBe(true);
  });
});
