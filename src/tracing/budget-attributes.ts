/**
 * The budget attributes of a `model.step` span, in sessions with a budget: the tokens the
 * provider reported for the step, and what is left of each cap once the step is counted (as
 * the session's ledger counts it: `src/common/budgets.ts`). Numbers only, no content. Pure.
 *
 * @module
 */
import type { Attributes } from '@opentelemetry/api';
import { costOf, type BudgetCaps, type ModelPrice, type StepUsage } from '../common/budgets.js';
import { SpanAttributes as A } from './spans.js';

/** The attribute of what is left of `cap`: `durable_agent.budget.remaining.totalTokens`, ... */
const budgetRemainingAttribute = (cap: keyof BudgetCaps): string => `${A.budgetRemaining}.${cap}`;

/**
 * The step's usage (when the provider reported it) and each cap's remaining after it:
 * `remaining` (what was left when the step was scheduled) less the step's own spend. Without
 * reported usage the step is counted by the workflow's estimate, which the worker does not
 * know: only `modelCalls` is left then, and `durable_agent.model.usage.estimated` says so.
 */
export function modelStepBudgetAttributes(
  budget: { remaining: BudgetCaps; price?: ModelPrice },
  usage: StepUsage | undefined,
): Attributes {
  const attributes: Attributes = {};
  if (usage) {
    attributes[A.modelInputTokens] = usage.inputTokens;
    attributes[A.modelOutputTokens] = usage.outputTokens;
    attributes[A.modelTotalTokens] = usage.totalTokens;
  } else {
    attributes[A.modelUsageEstimated] = true;
  }
  const step: Required<BudgetCaps> = {
    modelCalls: 1,
    toolCalls: 0,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    totalTokens: usage?.totalTokens ?? 0,
    costUsd: usage ? costOf(budget.price, usage.inputTokens, usage.outputTokens) : 0,
  };
  for (const [cap, left] of Object.entries(budget.remaining) as Array<[keyof BudgetCaps, number]>) {
    if (typeof left !== 'number') continue;
    if (!usage && cap !== 'modelCalls' && cap !== 'toolCalls') continue;
    const after = left - step[cap];
    attributes[budgetRemainingAttribute(cap)] =
      cap === 'costUsd' ? Math.max(0, Math.round(after * 1e9) / 1e9) : Math.max(0, after);
  }
  return attributes;
}
