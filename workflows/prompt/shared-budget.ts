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
  round9,
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
  type LeaseRequest,
  type SharedBudgetSpec,
} from '../../src/common/shared-budgets.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { serializeError } from '../../src/common/errors.js';
import { isCancellation, log, workflowInfo } from '@temporalio/workflow';
import { leaseSharedBudgetActivity } from '../activity-options.js';

/** The state the shared budgets read. */
interface SharedBudgetState {
  input: Pick<SessionWorkflowInput, 'budget' | 'sessionId' | 'taskQueue'>;
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
 * Make sure the leases of the shared budgets that cap tool calls (as the agent gives them, or
 * as a raise set them) hold `count` more. Undefined when they may start; the refusing cap
 * otherwise. The calls are charged once every budget let them: {@link chargeSharedToolCalls}.
 */
export async function reserveSharedToolCalls(
  state: SharedBudgetState,
  count: number,
): Promise<BudgetExceeded | undefined> {
  for (const spec of state.input.budget!.shared!) {
    const held = state.budget!.leases?.[spec.key];
    if (spec.caps.toolCalls === undefined && held?.caps?.toolCalls === undefined) continue;
    const ask = { ...held?.granted, toolCalls: Math.max(count, LEASE_TOOL_CALLS) };
    const refused = await ensureLease(state, spec, { toolCalls: count }, ask);
    if (refused) return refused;
  }
  return undefined;
}

/** Charge `count` tool calls that start to every lease held. */
export function chargeSharedToolCalls(state: SharedBudgetState, count: number): void {
  if (hasSharedBudgets(state)) chargeLeases(state.budget!, { toolCalls: count });
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

/** Whether the session holds a lease (or a request's answer is owed): one to give back. */
export function holdsLeases(state: SharedBudgetState): boolean {
  const ledger = state.budget;
  return (
    Object.keys(ledger?.leases ?? {}).length > 0 ||
    Object.keys(ledger?.pendingLeases ?? {}).length > 0
  );
}

/**
 * Give leases back: those granted near a cap (`'idle'`, when a prompt ends) or all of them
 * (`'all'`, when the session ends). Best effort: a budget that does not answer (its request
 * failed after its retries) is logged and the session goes on; the lease stays held and, as a
 * request owed, is sent again with the session's next request to that budget. Call only when
 * {@link holdsLeases}.
 */
export async function returnLeases(state: SharedBudgetState, which: 'idle' | 'all'): Promise<void> {
  for (const spec of state.input.budget?.shared ?? []) {
    const held = state.budget!.leases?.[spec.key];
    const owed = state.budget!.pendingLeases?.[spec.key];
    if (!owed && (!held || (which === 'idle' && !held.returnAtIdle))) continue;
    try {
      if (owed) await settleOwed(state, spec);
      if (state.budget!.leases?.[spec.key]) await request(state, spec, undefined, undefined);
    } catch (error) {
      if (isCancellation(error)) throw error;
      log.warn(`A lease of shared budget '${spec.key}' was not given back`, {
        error: serializeError(error),
      });
    }
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
      caps[name] = name === 'costUsd' ? round9(rest) : rest;
    }
    remaining[key] = caps;
  }
  return remaining;
}

/** Whether a lease is to go back when the prompt ends. */
export function hasIdleReturns(state: SharedBudgetState): boolean {
  if (Object.keys(state.budget?.pendingLeases ?? {}).length > 0) return true;
  return Object.values(state.budget?.leases ?? {}).some((lease) => lease.returnAtIdle);
}

/** The lease of `spec` holding `need`: the one held, or a new one asked for. */
async function ensureLease(
  state: SharedBudgetState,
  spec: SharedBudgetSpec,
  need: BudgetCaps,
  ask: BudgetCaps,
): Promise<BudgetExceeded | undefined> {
  if (state.budget!.pendingLeases?.[spec.key]) await settleOwed(state, spec);
  const held = state.budget!.leases?.[spec.key];
  if (leaseFits(held, { ...spec.caps, ...held?.caps }, need, Date.now())) return undefined;
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
 * with `need` a new one is asked for. Its lease id is new: `<sessionId>/<first run id>/<n>`
 * (a session id used again later, its history deleted, makes other ids). Until answered it is
 * owed (`pendingLeases`): the held lease is no longer charged, and a request that failed
 * after its retries is sent again, the same, before the next one (the budget may have
 * applied it: its answer, a lease the session did not learn of, is had then).
 */
async function request(
  state: SharedBudgetState,
  spec: SharedBudgetSpec,
  need: BudgetCaps | undefined,
  ask: BudgetCaps | undefined,
): Promise<LeaseAnswer> {
  const ledger = state.budget!;
  const held = ledger.leases?.[spec.key];
  ledger.leaseSeq = (ledger.leaseSeq ?? 0) + 1;
  const leaseId = `${state.input.sessionId}/${workflowInfo().firstExecutionRunId}/${ledger.leaseSeq}`;
  const leaseRequest: LeaseRequest = {
    key: spec.key,
    sessionId: state.input.sessionId,
    leaseId,
    caps: spec.caps,
    ...(spec.window !== undefined ? { window: spec.window } : {}),
    ...(need ? { need, ask: ask ?? need } : {}),
    ...(held ? { returning: { id: held.id, spent: { ...held.spent } } } : {}),
  };
  (ledger.pendingLeases ??= {})[spec.key] = leaseRequest;
  delete ledger.leases?.[spec.key];
  return send(state, leaseRequest);
}

/** Send the request owed to `spec`'s budget again (the same lease id), and take its answer. */
async function settleOwed(state: SharedBudgetState, spec: SharedBudgetSpec): Promise<void> {
  await send(state, state.budget!.pendingLeases![spec.key]!);
}

/** Send `leaseRequest` and hold what it grants; it stays owed if the request fails. */
async function send(state: SharedBudgetState, leaseRequest: LeaseRequest): Promise<LeaseAnswer> {
  const ledger = state.budget!;
  const answer = await leaseSharedBudgetActivity()({
    request: leaseRequest,
    // The budget's workflow, when none runs yet, starts on the agent's budgets queue (the
    // agent's own queue, not a handoff's).
    taskQueue: sharedBudgetTaskQueue(state.input.taskQueue),
  });
  delete ledger.pendingLeases![leaseRequest.key];
  const leases = (ledger.leases ??= {});
  delete leases[leaseRequest.key];
  const { leaseId } = leaseRequest;
  if ('granted' in answer) {
    leases[leaseRequest.key] = {
      id: leaseId,
      granted: answer.granted,
      spent: zeroAmounts(),
      ...(answer.windowEnd !== undefined ? { windowEnd: answer.windowEnd } : {}),
      returnAtIdle: answer.returnAtIdle,
      ...(answer.left ? { left: answer.left } : {}),
      ...(answer.caps ? { caps: answer.caps } : {}),
    };
  }
  return answer;
}
