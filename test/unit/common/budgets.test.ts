/** The budget ledger: reserve a step's worst case, settle what was reported, raise a cap. */
import { describe, expect, it } from 'vitest';
import {
  budgetStatusOf,
  capsProblems,
  costOf,
  inputEstimateOf,
  lowerCaps,
  newLedger,
  raiseCaps,
  remainingOf,
  reserve,
  settleStep,
  settleToolCall,
  stepWorstCase,
  type SessionBudgetSpec,
} from '../../../src/common/budgets.js';

const spec = (caps: SessionBudgetSpec['caps'], extra: Partial<SessionBudgetSpec> = {}) => ({
  caps,
  maxOutputTokens: 20,
  ...extra,
});

describe('a step reservation', () => {
  it('holds while spent + worst case stays within the cap, and is refused past it', () => {
    const s = spec({ totalTokens: 100 });
    const ledger = newLedger(s);
    expect(reserve(ledger, stepWorstCase(s, 80))).toBeUndefined(); // 80 + 20 = 100
    expect(reserve(ledger, stepWorstCase(s, 81))).toEqual({
      budget: 'totalTokens',
      limit: 100,
      spent: 0,
      reserved: 101,
    });
    expect(ledger.exceeded?.budget).toBe('totalTokens');
  });

  it('counts nothing itself: only the settlement spends', () => {
    const s = spec({ totalTokens: 100 });
    const ledger = newLedger(s);
    reserve(ledger, stepWorstCase(s, 10));
    expect(ledger.spent.totalTokens).toBe(0);
  });

  it('refuses a model call past modelCalls first, whatever the tokens', () => {
    const s = spec({ modelCalls: 1, totalTokens: 5 });
    const ledger = newLedger(s);
    settleStep(ledger, s, {
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      inputEstimate: 1,
      contextEstimate: 1,
      answerChars: 4,
    });
    expect(reserve(ledger, stepWorstCase(s, 100))?.budget).toBe('modelCalls');
  });

  it('prices the worst case for costUsd', () => {
    const price = { inputUsdPerMillion: 1_000_000, outputUsdPerMillion: 2_000_000 };
    const s = spec({ costUsd: 50 }, { price });
    expect(stepWorstCase(s, 10).costUsd).toBe(10 + 40);
    expect(reserve(newLedger(s), stepWorstCase(s, 10))).toBeUndefined();
    expect(reserve(newLedger(s), stepWorstCase(s, 11))?.budget).toBe('costUsd');
  });

  it('a cap of 0 refuses the first step', () => {
    const s = spec({ modelCalls: 0 });
    expect(reserve(newLedger(s), stepWorstCase(s, 0))?.budget).toBe('modelCalls');
  });
});

describe('a settlement', () => {
  it('adds exactly the reported usage, and prices it', () => {
    const s = spec({}, { price: { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 } });
    const ledger = newLedger(s);
    for (let i = 0; i < 3; i++) {
      settleStep(ledger, s, {
        usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
        inputEstimate: 7,
        contextEstimate: 7,
        answerChars: 10,
      });
    }
    expect(ledger.spent).toEqual({
      inputTokens: 300,
      outputTokens: 60,
      totalTokens: 360,
      modelCalls: 3,
      toolCalls: 0,
      costUsd: 0.00135,
      estimatedSteps: 0,
    });
  });

  it('counts the documented estimate when the provider reports none, and says so', () => {
    const s = spec({});
    const ledger = newLedger(s);
    const settled = settleStep(ledger, s, {
      inputEstimate: 30,
      contextEstimate: 30,
      answerChars: 41,
    });
    expect(settled).toEqual({
      inputTokens: 30,
      outputTokens: 11,
      totalTokens: 41,
      estimated: true,
    });
    expect(ledger.spent.estimatedSteps).toBe(1);
  });

  it('calibrates the next input estimate on what the provider counted beyond the context', () => {
    const s = spec({});
    const ledger = newLedger(s);
    settleStep(ledger, s, {
      usage: { inputTokens: 250, outputTokens: 5, totalTokens: 255 },
      inputEstimate: 50,
      contextEstimate: 50,
      answerChars: 4,
    });
    expect(inputEstimateOf(ledger, 60)).toBe(260);
  });
});

describe('tool calls, remaining, raises', () => {
  it('tool calls are refused past toolCalls', () => {
    const ledger = newLedger(spec({ toolCalls: 2 }));
    settleToolCall(ledger);
    expect(reserve(ledger, { toolCalls: 1 })).toBeUndefined();
    expect(reserve(ledger, { toolCalls: 2 })?.budget).toBe('toolCalls');
  });

  it('remaining is each cap set less its spend, never negative', () => {
    const s = spec({ totalTokens: 100, outputTokens: 10 });
    const ledger = newLedger(s);
    settleStep(ledger, s, {
      usage: { inputTokens: 60, outputTokens: 12, totalTokens: 72 },
      inputEstimate: 0,
      contextEstimate: 0,
      answerChars: 0,
    });
    expect(remainingOf(ledger)).toEqual({ totalTokens: 28, outputTokens: 0 });
  });

  it('a raise sets the caps it names, keeps the others, records who, and clears the refusal', () => {
    const s = spec({ totalTokens: 100, modelCalls: 3 });
    const ledger = newLedger(s);
    reserve(ledger, stepWorstCase(s, 500));
    raiseCaps(ledger, { caps: { totalTokens: 1000 }, identity: 'alice', at: 1 });
    const status = budgetStatusOf(ledger);
    expect(status.caps).toEqual({ totalTokens: 1000, modelCalls: 3 });
    expect(status.exceeded).toBeUndefined();
    expect(status.raises).toEqual([{ caps: { totalTokens: 1000 }, identity: 'alice', at: 1 }]);
  });
});

describe('caps', () => {
  it('the lower of the agent and the session holds', () => {
    expect(
      lowerCaps({ totalTokens: 100, modelCalls: 5 }, { totalTokens: 50, toolCalls: 2 }),
    ).toEqual({ totalTokens: 50, modelCalls: 5, toolCalls: 2 });
  });

  it('problems name the field: negative, non-integer, unknown, not a number', () => {
    expect(
      capsProblems(
        { totalTokens: -1, modelCalls: 1.5, costUsd: 0.25, bogus: 1, toolCalls: '3' },
        'budgets',
      ),
    ).toEqual([
      'budgets.totalTokens must be a non-negative integer, got -1',
      'budgets.modelCalls must be a non-negative integer, got 1.5',
      "budgets has an unknown key 'bogus' (keys: modelCalls, toolCalls, inputTokens, outputTokens, totalTokens, costUsd)",
      'budgets.toolCalls must be a non-negative integer, got "3"',
    ]);
    expect(capsProblems(null, 'budgets')).toHaveLength(1);
  });

  it('cost is rounded to 1e-9 dollars', () => {
    expect(costOf({ inputUsdPerMillion: 0.1, outputUsdPerMillion: 0.2 }, 3, 3)).toBe(9e-7);
    expect(costOf(undefined, 3, 3)).toBe(0);
  });
});
