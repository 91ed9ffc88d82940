/**
 * The session's budget in a prompt's run: reserve a model step's worst case before it is
 * scheduled, settle it with the usage its result reports, count tool calls, and tell
 * UserPromptSubmit what is left. Workflow code: the ledger is workflow state, so a replay
 * rebuilds it from the history and each step is settled exactly once (the workflow sees only
 * an activity's final result, whatever its attempts).
 *
 * @module
 */
import {
  inputEstimateOf,
  remainingOf,
  reserve,
  settleStep,
  settleToolCall,
  stepWorstCase,
  type BudgetCaps,
  type BudgetExceeded,
  type BudgetLedger,
} from '../../src/common/budgets.js';
import type { ContextWindow } from '../../src/common/context.js';
import type { JsonObject } from '../../src/common/json.js';
import type { ModelStepInput, ModelStepOutput } from '../../src/common/activity-io.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { chargeSharedStep, sharedRemaining } from './shared-budget.js';

/** The state the budget reads: the ledger, the spec in the input, the model's context. */
interface BudgetState {
  input: Pick<SessionWorkflowInput, 'budget' | 'sessionId' | 'taskQueue'>;
  taskQueue: string;
  /** The ledger; absent in sessions without a budget (nothing here does anything then). */
  budget?: BudgetLedger;
  /** The model's context, whose estimate is the step's input estimate. */
  context?: ContextWindow;
}

/** A reserved model step: the estimates its settlement needs. */
interface StepReservation {
  /** Input tokens reserved: the context's estimate plus the calibrated overhead. */
  inputEstimate: number;
  /** The context's own estimate (JSON characters / 4). */
  contextEstimate: number;
  /** The step's worst case, as reserved (what a shared budget's lease must hold). */
  worst: Required<BudgetCaps>;
}

/**
 * Reserve the next model step's worst case: `maxOutputTokens` plus the input estimate,
 * priced. Undefined without a budget; `{ refused }` naming the cap it would pass (the step
 * must not be called).
 */
export function reserveModelStep(
  state: BudgetState,
): { reservation: StepReservation } | { refused: BudgetExceeded } | undefined {
  const ledger = state.budget;
  const spec = state.input.budget;
  if (!ledger || !spec) return undefined;
  const contextEstimate = (state.context?.tokens ?? []).reduce((a, b) => a + b, 0);
  const inputEstimate = inputEstimateOf(ledger, contextEstimate);
  const worst = stepWorstCase(spec, inputEstimate);
  const refused = reserve(ledger, worst);
  return refused ? { refused } : { reservation: { inputEstimate, contextEstimate, worst } };
}

/** Settle a reserved step with the usage its output reports, or the documented estimate. */
export function settleModelStep(
  state: BudgetState,
  reservation: StepReservation,
  output: ModelStepOutput,
): void {
  const ledger = state.budget;
  const spec = state.input.budget;
  if (!ledger || !spec) return;
  const { inputEstimate, contextEstimate } = reservation;
  const usage = settleStep(ledger, spec, {
    ...(output.usage ? { usage: output.usage } : {}),
    inputEstimate,
    contextEstimate,
    answerChars: JSON.stringify({ text: output.text, toolCalls: output.toolCalls ?? [] }).length,
  });
  chargeSharedStep(state, usage);
}

/**
 * Reserve and count `count` tool calls about to start. Undefined when they may (or there is
 * no budget); the cap they would pass otherwise (recorded as the ledger's `exceeded`).
 */
export function reserveToolCalls(state: BudgetState, count: number): BudgetExceeded | undefined {
  const ledger = state.budget;
  if (!ledger) return undefined;
  const refused = reserve(ledger, { toolCalls: count });
  if (refused) return refused;
  for (let i = 0; i < count; i++) settleToolCall(ledger);
  return undefined;
}

/** UserPromptSubmit's `budget` field: what is left of each cap. Empty without a budget. */
export function budgetHookInput(state: BudgetState): { budget?: JsonObject } {
  if (!state.budget) return {};
  const remaining: BudgetCaps = remainingOf(state.budget);
  // Only with a lease held, so sessions without shared budgets keep their hook inputs.
  const shared = sharedRemaining(state.budget);
  const budget: JsonObject = { remaining: { ...remaining } };
  if (shared) {
    budget.shared = Object.fromEntries(Object.entries(shared).map(([k, caps]) => [k, { ...caps }]));
  }
  return { budget };
}

/**
 * What a model step's input carries of the budget: the provider's output limit, what is left
 * of each cap and the model's price (for its span). Empty without a budget.
 */
export function budgetStepInput(
  state: BudgetState,
): Pick<ModelStepInput, 'maxOutputTokens' | 'budget'> {
  const spec = state.input.budget;
  if (!spec || !state.budget) return {};
  const remaining = remainingOf(state.budget);
  return {
    maxOutputTokens: spec.maxOutputTokens,
    budget: { remaining, ...(spec.price ? { price: { ...spec.price } } : {}) },
  };
}
