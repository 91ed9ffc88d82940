/** A sub-agent's share of its parent's budget: allotted before it starts, settled when it ends. */
import { describe, expect, it } from 'vitest';
import { newLedger, type BudgetSpend } from '../../../src/common/budgets.js';
import {
  allotmentCharge,
  childAllotment,
  childBudgetSpec,
  settleChild,
} from '../../../src/common/subagent-budget.js';

const spec = { caps: { totalTokens: 1000, modelCalls: 7, costUsd: 0.01 }, maxOutputTokens: 20 };

const spend = (totalTokens: number, modelCalls: number, costUsd = 0): BudgetSpend => ({
  inputTokens: totalTokens - 10 * modelCalls,
  outputTokens: 10 * modelCalls,
  totalTokens,
  modelCalls,
  toolCalls: 1,
  costUsd,
  estimatedSteps: 0,
});

describe('a child allotment', () => {
  it('is what is left of each cap the parent sets, and nothing of the others', () => {
    const ledger = newLedger(spec);
    settleChild(ledger, {}, spend(300, 2, 0.002));
    expect(childAllotment(ledger, [], 1)).toEqual({
      totalTokens: 700,
      modelCalls: 5,
      costUsd: 0.008,
    });
  });

  it('leaves out what running children hold, and shares the rest among the calls to start', () => {
    const ledger = newLedger(spec);
    const first = childAllotment(ledger, [], 3);
    expect(first).toEqual({ totalTokens: 333, modelCalls: 2, costUsd: 0.003333333 });
    const second = childAllotment(ledger, [first], 2);
    const third = childAllotment(ledger, [first, second], 1);
    // Together the three fit in what was left.
    for (const cap of ['totalTokens', 'modelCalls', 'costUsd'] as const) {
      const sum = first[cap]! + second[cap]! + third[cap]!;
      expect(sum).toBeLessThanOrEqual(spec.caps[cap]);
    }
    expect(third).toEqual({ totalTokens: 334, modelCalls: 3, costUsd: 0.003333334 });
  });

  it('is never negative, also when the parent is past a cap', () => {
    const ledger = newLedger(spec);
    settleChild(ledger, {}, spend(1200, 8, 0.02));
    expect(childAllotment(ledger, [{ totalTokens: 50 }], 2)).toEqual({
      totalTokens: 0,
      modelCalls: 0,
      costUsd: 0,
    });
  });

  it('becomes the child budget: the lower of its own caps, the parent bound, its price', () => {
    const price = { inputUsdPerMillion: 1, outputUsdPerMillion: 2 };
    expect(
      childBudgetSpec(spec, { totalTokens: 500 }, price, { totalTokens: 200, modelCalls: 3 }),
    ).toEqual({ caps: { totalTokens: 200, modelCalls: 3 }, maxOutputTokens: 20, price });
    expect(childBudgetSpec(spec, { totalTokens: 500 }, undefined)).toEqual({
      caps: { totalTokens: 500 },
      maxOutputTokens: 20,
    });
  });
});

describe('settling a child', () => {
  it('adds the spend its result reports, every field', () => {
    const ledger = newLedger(spec);
    settleChild(ledger, { totalTokens: 500 }, spend(240, 2, 0.000054));
    settleChild(ledger, { totalTokens: 500 }, spend(120, 1, 0.000027));
    expect(ledger.spent).toEqual({
      inputTokens: 330,
      outputTokens: 30,
      totalTokens: 360,
      modelCalls: 3,
      toolCalls: 2,
      costUsd: 0.000081,
      estimatedSteps: 0,
    });
  });

  it('charges the whole allotment when the child ended without saying what it spent', () => {
    const ledger = newLedger(spec);
    const allotment = { totalTokens: 280, modelCalls: 3 };
    expect(settleChild(ledger, allotment, undefined)).toEqual(allotmentCharge(allotment));
    expect(ledger.spent).toMatchObject({ totalTokens: 280, modelCalls: 3, inputTokens: 0 });
  });
});
