/**
 * The session's budget recounted from its history: the caps and spend the run started with
 * (its input, or the ledger carried over continue-as-new), each `modelStep` result's usage,
 * each `raiseBudget` Update. What `inspect` prints as its budget line. Pure.
 *
 * @module
 */
import {
  costOf,
  newLedger,
  raiseCaps,
  remainingOf,
  type BudgetCaps,
  type BudgetLedger,
  type BudgetRaise,
  type BudgetSpend,
  type StepUsage,
} from '../common/budgets.js';
import { settleChild } from '../common/subagent-budget.js';
import { isPlainObject } from '../common/json.js';
import type { SessionWorkflowInput } from '../common/workflow-io.js';

/** A session's budget as its history tells it. */
export interface HistoryBudget {
  /** The caps at the end of the history (raises included). */
  caps: BudgetCaps;
  /**
   * Spent up to the end of the history: earlier runs' (carried) and this run's model steps.
   * Tool calls are those counted when the run started (this run's are in `toolCalls`).
   */
  spent: BudgetLedger['spent'];
  /** What is left of each cap. */
  remaining: BudgetCaps;
  /** Raises recorded in this history and carried in. */
  raises: number;
  /** Those raises: the caps each set, who set them, when; oldest first. */
  raiseLog: BudgetRaise[];
}

/** The ledger a run starts with, from its input; undefined without a budget. */
export function budgetOfInput(
  input: Partial<SessionWorkflowInput> | undefined,
): BudgetLedger | undefined {
  if (!input?.budget) return undefined;
  return structuredClone(input.carry?.budget ?? newLedger(input.budget));
}

/** Add one completed model step's result: its usage, or an estimated step. */
export function budgetStepCompleted(
  ledger: BudgetLedger,
  input: Partial<SessionWorkflowInput> | undefined,
  output: unknown,
): void {
  if (!isPlainObject(output) || output.deferred !== undefined) return;
  const usage = output.usage as StepUsage | undefined;
  ledger.spent.modelCalls += 1;
  if (!usage) {
    ledger.spent.estimatedSteps += 1;
    return;
  }
  ledger.spent.inputTokens += usage.inputTokens;
  ledger.spent.outputTokens += usage.outputTokens;
  ledger.spent.totalTokens += usage.totalTokens;
  ledger.spent.costUsd =
    Math.round(
      (ledger.spent.costUsd + costOf(input?.budget?.price, usage.inputTokens, usage.outputTokens)) *
        1e9,
    ) / 1e9;
}

/** Apply an accepted `raiseBudget` Update's argument. */
export function budgetRaised(ledger: BudgetLedger, args: unknown, at: number): void {
  const caps = isPlainObject(args) && isPlainObject(args.caps) ? (args.caps as BudgetCaps) : {};
  const identity = isPlainObject(args) && typeof args.identity === 'string' ? args.identity : '';
  raiseCaps(ledger, { caps, identity, at });
}

/** The ledger as the timeline shows it. */
export function historyBudgetOf(ledger: BudgetLedger): HistoryBudget {
  return {
    caps: ledger.caps,
    spent: ledger.spent,
    remaining: remainingOf(ledger),
    raises: ledger.raises.length,
    raiseLog: ledger.raises,
  };
}

/** `inspect`'s line: `budget: totalTokens 450 of 1000 (550 left), modelCalls 3, ...`. */
export function budgetLine(budget: HistoryBudget): string {
  const { spent, caps, remaining } = budget;
  const parts = (['inputTokens', 'outputTokens', 'totalTokens', 'modelCalls', 'costUsd'] as const)
    .filter((name) => caps[name] !== undefined || spent[name] > 0)
    .map((name) =>
      caps[name] === undefined
        ? `${name} ${spent[name]}`
        : `${name} ${spent[name]} of ${caps[name]} (${remaining[name]} left)`,
    );
  const notes = [
    ...(spent.estimatedSteps > 0 ? [`${spent.estimatedSteps} step(s) without usage`] : []),
    ...(budget.raises > 0 ? [`raised ${budget.raises} time(s)`] : []),
  ];
  return `budget: ${parts.join(', ')}${notes.length > 0 ? `; ${notes.join(', ')}` : ''}`;
}

/**
 * A sub-agent started with a share of the session's budget (its input's caps): kept until it
 * ends, as the workflow keeps it.
 */
export function budgetChildStarted(
  build: { budget?: BudgetLedger; childAllotments?: Map<number, BudgetCaps> },
  initiatedEventId: number,
  input: Partial<SessionWorkflowInput> | undefined,
): void {
  const caps = input?.budget?.caps;
  if (!build.budget || !isPlainObject(caps)) return;
  (build.childAllotments ??= new Map()).set(initiatedEventId, caps);
}

/**
 * A sub-agent ended: the session adds what its result says it spent; `charged` (it was
 * cancelled, failed, timed out, or terminated) and no spend known, its whole allotment; one
 * that never started, nothing. As `task-budget.ts` settles it in the workflow.
 */
export function budgetChildClosed(
  build: { budget?: BudgetLedger; childAllotments?: Map<number, BudgetCaps> },
  initiatedEventId: number,
  spent: BudgetSpend | undefined,
  charged: boolean,
): void {
  const allotment = build.childAllotments?.get(initiatedEventId);
  if (!build.budget || !allotment) return;
  build.childAllotments!.delete(initiatedEventId);
  if (spent || charged)
    settleChild(build.budget, allotment, isPlainObject(spent) ? spent : undefined);
}
