/**
 * The tool calls of one model step: each through the tool pipeline, in call order, every call
 * with exactly one result; in a session with sub-agents, consecutive `Task` calls side by side.
 *
 * @module
 */
import type { ApplicationFailure } from '@temporalio/workflow';
import type {
  ConversationMessage,
  ToolCall,
  ToolResultMessagePart,
} from '../../src/common/conversation.js';
import type { ToolCallRecord } from '../../src/common/messages.js';
import type { BudgetLedger } from '../../src/common/budgets.js';
import type { ContextWindow } from '../../src/common/context.js';
import { reserveToolCalls } from './budget.js';
import {
  chargeSharedToolCalls,
  hasSharedBudgets,
  reserveSharedToolCalls,
} from './shared-budget.js';
import type { BudgetExceeded } from '../../src/common/budgets.js';
import type { ToolResult } from '../../src/common/types.js';
import { isTaskCall, runningChildren } from './task-call.js';
import { passTurn, taskGroupOf } from './task-group.js';
import { runToolCall } from './tool-pipeline.js';
import { cancelledResult, type ToolCallOutcome, type ToolPipelineState } from './tool-call-run.js';

/** The session state the calls of a step read and write. */
export interface ToolCallsState extends ToolPipelineState {
  /** Append a message to the transcript and the model's context. */
  addMessage(message: ConversationMessage): void;
  /** The session's budget ledger; absent without a budget (`budget.ts`). */
  budget?: BudgetLedger;
  /** The model's context (its estimate is a step's input estimate). */
  context?: ContextWindow;
}

/**
 * Run the calls of one model step in order. Every call gets exactly one result, in call
 * order, also when the prompt is aborted or interrupted, so the next request is well formed.
 * In a session with sub-agents, consecutive `Task` calls run side by side (`runTaskGroup`).
 * @returns whether a denial interrupted the prompt.
 * @throws the hook's failure when a tool hook failed and `toolHookErrors` is `'reject'`
 *   (after every call got its result: the calls after it did not run).
 */
export async function runToolCalls(
  state: ToolCallsState,
  calls: ToolCall[],
  requestId: string,
  records: ToolCallRecord[],
): Promise<boolean> {
  const results: ToolResultMessagePart[] = [];
  let interrupted = false;
  let rejectWith: ApplicationFailure | undefined;
  let executed: ToolCallOutcome | undefined;
  const push = (call: ToolCall, result: ToolResult) =>
    results.push({
      toolUseId: call.toolUseId,
      toolName: call.toolName,
      status: result.status,
      model: result.model,
    });
  const pushDone = (call: ToolCall, outcome: ToolCallOutcome) => {
    push(call, outcome.result);
    records.push(outcome.record);
  };
  const pushCancelled = (call: ToolCall, why: string) => {
    push(call, cancelledResult(call.toolName, why));
    records.push({
      toolUseId: call.toolUseId,
      toolName: call.toolName,
      toolInput: call.input,
      status: 'cancelled',
    });
  };
  // What a call that ran and was then cut short by the abort reports.
  const pushRan = (call: ToolCall, ran: ToolCallOutcome) => {
    push(call, {
      ...ran.result,
      model: `${ran.result.model}\n[the prompt was aborted after this tool ran]`,
    });
    records.push(ran.record);
  };
  try {
    for (const batch of batchesOf(state, calls)) {
      // A batch the toolCalls cap refuses does not start; the prompt ends `budget_exceeded`.
      // A shared budget that caps tool calls is asked first (only sessions with one await);
      // the calls are charged to its lease once the session's own caps let them start too.
      let refused: BudgetExceeded | undefined;
      if (!interrupted && !rejectWith) {
        if (hasSharedBudgets(state)) refused = await reserveSharedToolCalls(state, batch.length);
        refused ??= reserveToolCalls(state, batch.length);
        if (!refused) chargeSharedToolCalls(state, batch.length);
      }
      if (interrupted || rejectWith || refused || state.budget?.exceeded) {
        const why = interrupted
          ? 'an earlier call was denied with interrupt'
          : rejectWith
            ? 'a hook of an earlier call failed'
            : `the ${state.budget?.exceeded?.shared ? `shared budget ${state.budget.exceeded.shared}'s` : "session's"} ${state.budget?.exceeded?.budget ?? 'toolCalls'} budget (${state.budget?.exceeded?.limit}) is spent`;
        for (const call of batch) pushCancelled(call, why);
        continue;
      }
      const outcomes =
        batch.length === 1
          ? [await runToolCall(state, batch[0]!, requestId, (ran) => (executed = ran))]
          : await runTaskGroup(state, batch, requestId, { pushDone, pushCancelled, pushRan });
      executed = undefined;
      batch.forEach((call, i) => {
        const outcome = outcomes[i]!;
        pushDone(call, outcome);
        // In a group, an interrupt or a failed hook stops the calls after the group only.
        interrupted ||= outcome.interrupt;
        rejectWith ??= outcome.rejectWith;
      });
    }
  } finally {
    // Aborted after the current call's tool ran: the model learns what really happened.
    const ran = executed as ToolCallOutcome | undefined;
    if (ran && results.length < calls.length) pushRan(calls[results.length]!, ran);
    for (const call of calls.slice(results.length)) pushCancelled(call, 'the prompt was aborted');
    state.addMessage({ role: 'tool', results });
  }
  if (rejectWith) throw rejectWith;
  return interrupted;
}

/**
 * The calls in the batches they run in: one call a batch, but in a session with sub-agents a
 * run of consecutive `Task` calls is one batch (a parallel group).
 */
function batchesOf(state: ToolCallsState, calls: ToolCall[]): ToolCall[][] {
  if (state.input.subagents === undefined) return calls.map((call) => [call]);
  const batches: ToolCall[][] = [];
  for (const call of calls) {
    const last = batches.at(-1);
    const joins = last !== undefined && isTaskCall(state, last[0]!) && isTaskCall(state, call);
    if (joins) last.push(call);
    else batches.push([call]);
  }
  return batches;
}

/**
 * Run a parallel group: each call's whole pipeline at once, the limits checked in call order
 * (`task-group.ts`). Waits for every call to end, also when the prompt is aborted (each
 * sub-agent's SessionEnd comes first).
 * @returns each call's outcome, in call order.
 * @throws the abort, after pushing every call's result (`report`) in call order.
 */
async function runTaskGroup(
  state: ToolCallsState,
  group: ToolCall[],
  requestId: string,
  report: {
    pushDone: (call: ToolCall, outcome: ToolCallOutcome) => void;
    pushCancelled: (call: ToolCall, why: string) => void;
    pushRan: (call: ToolCall, ran: ToolCallOutcome) => void;
  },
): Promise<ToolCallOutcome[]> {
  const taskGroup = taskGroupOf(group, runningChildren(state));
  state.taskGroup = taskGroup;
  const executed: (ToolCallOutcome | undefined)[] = group.map(() => undefined);
  let settled: PromiseSettledResult<ToolCallOutcome>[];
  try {
    settled = await Promise.allSettled(
      group.map((call, i) =>
        runToolCall(state, call, requestId, (ran) => (executed[i] = ran)).finally(() =>
          // A call that ended before the limit check lets the next one take its turn.
          passTurn(taskGroup, call, false),
        ),
      ),
    );
  } finally {
    state.taskGroup = undefined;
  }
  const failed = settled.find((s) => s.status === 'rejected');
  if (!failed) return settled.map((s) => (s as PromiseFulfilledResult<ToolCallOutcome>).value);
  // Aborted: every call of the group reports as far as it got, then the abort goes on.
  group.forEach((call, i) => {
    const outcome = settled[i]!;
    if (outcome.status === 'fulfilled') report.pushDone(call, outcome.value);
    else if (executed[i]) report.pushRan(call, executed[i]);
    else report.pushCancelled(call, 'the prompt was aborted');
  });
  throw failed.reason;
}
