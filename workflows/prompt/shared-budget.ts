/**
 * The session's side of its shared budgets (`advanced.budgets.shared`): before a model step
 * or a batch of tool calls, the lease of each shared budget must hold it, or the session asks
 * the budget's workflow for a new one (giving the old back in the same request); what the
 * step spent is charged to the leases; leases go back when the prompt ends near a cap and when
 * the session ends. Workflow code: the leases are workflow state, rebuilt by replay from the
 * recorded answers, so a request is never made twice and a step never charged twice. Only
 * sessions with shared budgets reach an `await` here.
 *
 * @module
 */
import {
  costOf,
  type BudgetCaps,
  type BudgetExceeded,
  type BudgetLedger,
} from '../../src/common/budgets.js';
import {
  LEASE_STEPS,
  LEASE_TOOL_CALLS,
  addAmounts,
  leaseFits,
  sharedBudgetTaskQueue,
  zeroAmounts,
  type BudgetAmounts,
  type LeaseAnswer,
  type SharedBudgetSpec,
} from '../../src/common/shared-budgets.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { leaseSharedBudgetActivity } from '../activity-options.js';

/** The state the shared budgets read. */
interface SharedBudgetState {
  input: Pick<SessionWorkflowInput, 'budget' | 'sessionId'>;
  budget?: BudgetLedger;
  taskQueue: string;
}

/** Whether the session spends from shared budgets (only then does anything here await). */
export function hasSharedBudgets(state: SharedBudgetState): boolean {
  return (state.input.budget?.shared?.length ?? 0) > 0 && state.budget !== undefined;
}

/**
 * Make sure every shared budget's lease holds a model step of worst case `worst`. Undefined
 * when they do; the cap that refused otherwise (recorded as the ledger's `exceeded`).
 */
export async function reserveSharedStep(
  state: SharedBudgetState,
  worst: Required<BudgetCaps>,
): Promise<BudgetExceeded | undefined> {
  const ask: BudgetCaps = { toolCalls: LEASE_TOOL_CALLS };
  for (const name of Object.keys(worst) as (keyof BudgetCaps)[]) {
    if (name !== 'toolCalls') ask[name] = worst[name] * LEASE_STEPS;
  }
  for (const spec of state.input.budget!.shared!) {
    const refused = await ensureLease(state, spec, worst, ask);
    if (refused) return refused;
  }
  return undefined;
}

/**
 * Make sure the leases of the shared budgets that cap tool calls hold `count` more, then
 * charge them to every lease held. Undefined when they may start; the refusing cap otherwise.
 */
export async function reserveSharedToolCalls(
  state: SharedBudgetState,
  count: number,
): Promise<BudgetExceeded | undefined> {
  for (const spec of state.input.budget!.shared!) {
    if (spec.caps.toolCalls === undefined) continue;
    const held = state.budget!.leases?.[spec.key];
    const ask = { ...held?.granted, toolCalls: Math.max(count, LEASE_TOOL_CALLS) };
    const refused = await ensureLease(state, spec, { toolCalls: count }, ask);
    if (refused) return refused;
  }
  chargeLeases(state.budget!, { toolCalls: count });
  return undefined;
}

/** Charge a settled model step's usage to every lease held. */
export function chargeSharedStep(
  state: SharedBudgetState,
  usage: { inputTokens: number; outputTokens: number; totalTokens: number },
): void {
  if (!hasSharedBudgets(state)) return;
  chargeLeases(state.budget!, {
    modelCalls: 1,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
    costUsd: costOf(state.input.budget!.price, usage.inputTokens, usage.outputTokens),
  });
}

function chargeLeases(ledger: BudgetLedger, amounts: Partial<BudgetAmounts>): void {
  for (const lease of Object.values(ledger.leases ?? {})) addAmounts(lease.spent, amounts);
}

/**
 * Give leases back: those granted near a cap (`'idle'`, when a prompt ends) or all of them
 * (`'all'`, when the session ends). No request without a lease to give back.
 */
export async function returnLeases(state: SharedBudgetState, which: 'idle' | 'all'): Promise<void> {
  const leases = state.budget?.leases;
  if (!leases) return;
  for (const spec of state.input.budget?.shared ?? []) {
    const held = leases[spec.key];
    if (!held || (which === 'idle' && !held.returnAtIdle)) continue;
    await request(state, spec, undefined, undefined);
  }
}

/**
 * What hook inputs get of the shared budgets: for each key, what is left of each cap (in the
 * budget besides the session's lease when it was granted, plus what the lease still holds).
 */
export function sharedRemaining(ledger: BudgetLedger): Record<string, BudgetCaps> | undefined {
  const leases = Object.entries(ledger.leases ?? {});
  if (leases.length === 0) return undefined;
  const remaining: Record<string, BudgetCaps> = {};
  for (const [key, lease] of leases) {
    const caps: BudgetCaps = {};
    for (const [name, left] of Object.entries(lease.left ?? {}) as [keyof BudgetCaps, number][]) {
      const rest = left + Math.max(0, (lease.granted[name] ?? 0) - lease.spent[name]);
      caps[name] = name === 'costUsd' ? Math.round(rest * 1e9) / 1e9 : rest;
    }
    remaining[key] = caps;
  }
  return remaining;
}

/** Whether a lease is to go back when the prompt ends. */
export function hasIdleReturns(state: SharedBudgetState): boolean {
  return Object.values(state.budget?.leases ?? {}).some((lease) => lease.returnAtIdle);
}

/** The lease of `spec` holding `need`: the one held, or a new one asked for. */
async function ensureLease(
  state: SharedBudgetState,
  spec: SharedBudgetSpec,
  need: BudgetCaps,
  ask: BudgetCaps,
): Promise<BudgetExceeded | undefined> {
  if (leaseFits(state.budget!.leases?.[spec.key], spec.caps, need, Date.now())) return undefined;
  const answer = await request(state, spec, need, ask);
  if (!('refused' in answer)) return undefined;
  const { refused } = answer;
  const exceeded: BudgetExceeded = {
    budget: refused.budget,
    limit: refused.limit,
    spent: refused.spent,
    reserved: refused.reserved,
    shared: spec.key,
    leased: refused.leased,
  };
  state.budget!.exceeded = exceeded;
  return exceeded;
}

/**
 * One request to `spec`'s budget: the held lease goes back (with what was spent of it), and
 * with `need` a new one is asked for. The request's id is the session's next lease id.
 */
async function request(
  state: SharedBudgetState,
  spec: SharedBudgetSpec,
  need: BudgetCaps | undefined,
  ask: BudgetCaps | undefined,
): Promise<LeaseAnswer> {
  const ledger = state.budget!;
  const leases = (ledger.leases ??= {});
  const held = leases[spec.key];
  ledger.leaseSeq = (ledger.leaseSeq ?? 0) + 1;
  const leaseId = `${state.input.sessionId}/${ledger.leaseSeq}`;
  const answer = await leaseSharedBudgetActivity()({
    request: {
      key: spec.key,
      sessionId: state.input.sessionId,
      leaseId,
      caps: spec.caps,
      ...(spec.window !== undefined ? { window: spec.window } : {}),
      ...(need ? { need, ask: ask ?? need } : {}),
      ...(held ? { returning: { id: held.id, spent: held.spent } } : {}),
    },
    // The budget's workflow, when none runs yet, starts on the agent's budgets queue.
    taskQueue: sharedBudgetTaskQueue(state.taskQueue),
  });
  delete leases[spec.key];
  if ('granted' in answer) {
    leases[spec.key] = {
      id: leaseId,
      granted: answer.granted,
      spent: zeroAmounts(),
      ...(answer.windowEnd !== undefined ? { windowEnd: answer.windowEnd } : {}),
      returnAtIdle: answer.returnAtIdle,
      ...(answer.left ? { left: answer.left } : {}),
    };
  }
  return answer;
}
