/**
 * A sub-agent's share of its parent's session budget: the parent allots part of what is left
 * to each `Task` call it starts (the child runs under it as its own session budget), and
 * settles the child's spend when it ends, or the whole allotment when its spend is unknown (a
 * child cancelled, failed or timed out). The allotments of the children running at once never
 * add up to more than the parent has left, so delegation never passes a cap. Pure,
 * workflow-safe.
 *
 * @module
 */
import {
  BUDGET_NAMES,
  remainingOf,
  round9,
  type BudgetCaps,
  type BudgetLedger,
  type BudgetSpend,
  type ModelPrice,
  type SessionBudgetSpec,
} from './budgets.js';

const floor9 = (n: number) => Math.floor(Math.round(n * 1e12) / 1e3) / 1e9;

/**
 * The caps a child starts under: for each cap of the parent, what is left of it, less what
 * `outstanding` children hold, divided by `share` (the `Task` calls of the parallel group yet
 * to start, this one included; 1 alone). Rounded down (tokens and calls to integers, dollars
 * to 1e-9), never negative: the allotments of `share` calls together fit in what is left.
 *
 * @example
 * // 1000 tokens left, 200 held by a running child, two calls of the group to start:
 * childAllotment(ledger, [{ totalTokens: 200 }], 2); // { totalTokens: 400 }
 */
export function childAllotment(
  ledger: BudgetLedger,
  outstanding: Iterable<BudgetCaps>,
  share: number,
): BudgetCaps {
  const free = remainingOf(ledger);
  for (const held of outstanding) {
    for (const cap of BUDGET_NAMES) {
      if (free[cap] !== undefined && held[cap] !== undefined) free[cap] -= held[cap];
    }
  }
  const allotment: BudgetCaps = {};
  const parts = Math.max(1, Math.floor(share));
  for (const cap of BUDGET_NAMES) {
    const left = free[cap];
    if (left === undefined) continue;
    const part = Math.max(0, left) / parts;
    allotment[cap] = cap === 'costUsd' ? floor9(part) : Math.floor(part);
  }
  return allotment;
}

/**
 * The budget of a child session: its allotment as its caps (the lower of each when the child
 * has caps of its own), the parent's output bound, and the price of the child's model.
 */
export function childBudgetSpec(
  parent: SessionBudgetSpec,
  allotment: BudgetCaps,
  price: ModelPrice | undefined,
  own?: BudgetCaps,
): SessionBudgetSpec {
  const caps: BudgetCaps = { ...allotment };
  for (const cap of BUDGET_NAMES) {
    const mine = own?.[cap];
    if (mine === undefined) continue;
    const allotted = caps[cap];
    caps[cap] = allotted === undefined ? mine : Math.min(allotted, mine);
  }
  return {
    caps,
    maxOutputTokens: parent.maxOutputTokens,
    ...(price ? { price: { ...price } } : {}),
    // The shared budgets (a tenant's, the agent's) hold for the child too: it leases its own.
    ...(parent.shared ? { shared: parent.shared } : {}),
  };
}

/**
 * What a child whose spend is unknown is charged: its whole allotment (each cap it was given;
 * nothing of the others). Conservative: the parent's caps still hold.
 */
export function allotmentCharge(allotment: BudgetCaps): BudgetSpend {
  return {
    inputTokens: allotment.inputTokens ?? 0,
    outputTokens: allotment.outputTokens ?? 0,
    totalTokens: allotment.totalTokens ?? 0,
    modelCalls: allotment.modelCalls ?? 0,
    toolCalls: allotment.toolCalls ?? 0,
    costUsd: allotment.costUsd ?? 0,
    estimatedSteps: 0,
  };
}

/**
 * Settle a child that ended: add `spent` (what its result reports) to the parent's ledger,
 * or, when its result reports none, its whole allotment. Returns what was added.
 */
export function settleChild(
  ledger: BudgetLedger,
  allotment: BudgetCaps,
  spent: BudgetSpend | undefined,
): BudgetSpend {
  const added = spent ? spendOf(spent) : allotmentCharge(allotment);
  const total = ledger.spent;
  total.inputTokens += added.inputTokens;
  total.outputTokens += added.outputTokens;
  total.totalTokens += added.totalTokens;
  total.modelCalls += added.modelCalls;
  total.toolCalls += added.toolCalls;
  total.costUsd = round9(total.costUsd + added.costUsd);
  total.estimatedSteps += added.estimatedSteps;
  return added;
}

/** `spent` as read from a child's result: every field a finite number, else 0. */
function spendOf(spent: Partial<BudgetSpend>): BudgetSpend {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    inputTokens: n(spent.inputTokens),
    outputTokens: n(spent.outputTokens),
    totalTokens: n(spent.totalTokens),
    modelCalls: n(spent.modelCalls),
    toolCalls: n(spent.toolCalls),
    costUsd: n(spent.costUsd),
    estimatedSteps: n(spent.estimatedSteps),
  };
}
