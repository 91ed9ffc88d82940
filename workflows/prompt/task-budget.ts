/**
 * A `Task` call's share of the session's budget: before its sub-agent starts, the session
 * allots it part of what is left (`src/common/subagent-budget.ts`), which the sub-agent runs
 * under as its own budget; when the sub-agent ends, the session settles what it spent (its
 * result says), or the whole allotment when it ended without saying (cancelled, failed, timed
 * out). Sessions without a budget allot nothing, and their sub-agents start as they always
 * did. Workflow code.
 *
 * @module
 */
import type {
  BudgetCaps,
  BudgetLedger,
  BudgetSpend,
  SessionBudgetSpec,
} from '../../src/common/budgets.js';
import { childAllotment, childBudgetSpec, settleChild } from '../../src/common/subagent-budget.js';
import type { SessionWorkflowInput, SubagentSpec } from '../../src/common/workflow-io.js';
import type { TaskGroup } from './task-group.js';

/** The session state a `Task` call's budget reads and writes. */
export interface TaskBudgetState {
  /** The ledger; absent without a budget. */
  budget?: BudgetLedger;
  /** The allotments of the sub-agents running now, by `Task` call id. */
  childAllotments?: Map<string, BudgetCaps>;
}

/**
 * Allot the `Task` call `toolUseId` its share: what is left of each cap, less what running
 * sub-agents hold, divided among the calls of its parallel `group` yet to start (this one
 * included). Returns the sub-agent's budget; undefined without a budget.
 */
export function allotTaskBudget(
  state: TaskBudgetState & { input: Pick<SessionWorkflowInput, 'budget'> },
  toolUseId: string,
  subagent: Pick<SubagentSpec, 'price'>,
  group?: TaskGroup,
): SessionBudgetSpec | undefined {
  const ledger = state.budget;
  const spec = state.input.budget;
  if (!ledger || !spec) return undefined;
  const held = (state.childAllotments ??= new Map());
  const index = group ? group.calls.findIndex((c) => c.toolUseId === toolUseId) : -1;
  const share = group && index >= 0 ? group.calls.length - index : 1;
  const allotment = childAllotment(ledger, held.values(), share);
  held.set(toolUseId, allotment);
  return childBudgetSpec(spec, allotment, subagent.price);
}

/**
 * Settle the `Task` call `toolUseId`'s sub-agent: add `spent` (its result's), or, when
 * `charge` and it reported none, its whole allotment; release the allotment. A sub-agent that
 * never started (`charge` false, no spend) costs nothing.
 */
export function settleTaskBudget(
  state: TaskBudgetState,
  toolUseId: string,
  spent: BudgetSpend | undefined,
  charge: boolean,
): void {
  const allotment = state.childAllotments?.get(toolUseId);
  if (!state.budget || !allotment) return;
  state.childAllotments!.delete(toolUseId);
  if (spent || charge) settleChild(state.budget, allotment, spent);
}
