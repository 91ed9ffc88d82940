/**
 * One `send()`: UserPromptSubmit, the model loop, then TaskCompleted (contract §8).
 *
 * @module
 */
import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { SerializedError } from '../src/common/errors.js';
import { HookEvent } from '../src/common/hook-events.js';
import {
  applyTaskCompleted,
  applyUserPromptSubmit,
  clipText,
  describePrompt,
} from '../src/common/hook-rules.js';
import type {
  ConversationMessage,
  ToolCall,
  ToolResultMessagePart,
} from '../src/common/conversation.js';
import type {
  SendRequest,
  SendResult,
  SendStatus,
  ToolCallRecord,
} from '../src/common/protocol.js';
import type { ToolResult } from '../src/common/types.js';
import type { ContextStamp } from '../src/common/context-stamp.js';
import { modelStepActivity } from './activity-options.js';
import { dispatchEvent, hasCallbacks } from './dispatch.js';
import {
  cancelledResult,
  runToolCall,
  type ToolCallOutcome,
  type ToolPipelineState,
} from './tool-pipeline.js';
import { hookFailure, toFailure } from './failures.js';
import { takeStreamEvents } from './stream-outbox.js';
import { identityFields, withRefusalRetries } from './version-refusal.js';
import { DEFAULTS } from '../src/common/defaults.js';

/** The session state a prompt reads and writes. */
export interface PromptState extends ToolPipelineState {
  /** Append a message to the transcript and the model's context. */
  addMessage(message: ConversationMessage): void;
  /** Stamp the context a model step reads and hand it to this worker's cache (`context-sync.ts`). */
  contextStamp?: () => ContextStamp;
}

/**
 * Run one prompt to its end. Cancellation (abort) propagates to the caller, which still has
 * `toolCalls`: each call made so far with its outcome (a call cut short reads `cancelled`).
 */
export async function runPrompt(
  state: PromptState,
  request: SendRequest,
  promptIndex: number,
  toolCalls: ToolCallRecord[] = [],
): Promise<SendResult> {
  const { requestId } = request;
  let prompt = request.prompt;
  const original = describePrompt(prompt);
  // An event without callbacks is not dispatched at all (no await: see hasCallbacks).
  const submitted = hasCallbacks(state, HookEvent.UserPromptSubmit)
    ? await dispatchEvent(state, HookEvent.UserPromptSubmit, { ...original }, { requestId })
    : undefined;
  if (submitted) {
    const decision = applyUserPromptSubmit(prompt, submitted);
    if (decision.kind === 'reject') {
      throw hookFailure('HOOK_ABORTED', decision.reason, {
        event: HookEvent.UserPromptSubmit,
        callbackIndex: decision.decidedBy,
      });
    }
    prompt = decision.prompt;
  }

  state.addMessage({ role: 'user', content: prompt });
  let text = '';
  let status: SendStatus = 'completed';
  for (let step = 0; ; step++) {
    if (step >= state.input.maxTurns) {
      status = 'max_turns';
      break;
    }
    let output;
    try {
      const what = `model step ${step + 1} of prompt ${promptIndex + 1}`;
      setCurrentDetails(`running ${what}`);
      const stepInput = {
        sessionId: state.input.sessionId,
        agentName: state.input.agentName,
        ...identityFields(state.input),
        requestId,
        step,
        promptIndex,
        modelStepIndex: state.modelSteps++,
        ...(state.contextStamp ? { context: state.contextStamp() } : {}),
        ...takeStreamEvents(state, requestId),
      };
      output = await withRefusalRetries(
        state.input,
        { task: `model step ${stepInput.modelStepIndex}` },
        state.input.modelTimeoutMs ?? DEFAULTS.modelTimeoutMs,
        (eager) =>
          modelStepActivity(state.taskQueue, state.input.modelTimeoutMs, eager, what)(stepInput),
      );
    } catch (error) {
      throw modelFailure(error);
    }
    const calls = output.toolCalls ?? [];
    state.addMessage({ role: 'assistant', text: output.text, toolCalls: calls });
    text = output.text;
    if (calls.length === 0) break;
    if (await runToolCalls(state, calls, requestId, toolCalls)) {
      status = 'interrupted';
      break;
    }
  }

  if (status === 'completed' && hasCallbacks(state, HookEvent.TaskCompleted)) {
    const sent = describePrompt(prompt);
    const completed = await dispatchEvent(
      state,
      HookEvent.TaskCompleted,
      {
        taskId: requestId,
        taskDescription: clipText(sent.userPrompt),
        hasImages: sent.hasImages,
        imageCount: sent.imageCount,
        resultSummary: clipText(text),
        success: true,
      },
      { requestId },
    );
    if (completed) {
      const decision = applyTaskCompleted(completed);
      if (decision.kind === 'fail') {
        throw hookFailure('TASK_FAILED', decision.reason, {
          event: HookEvent.TaskCompleted,
          ...(completed.decidedBy !== undefined ? { callbackIndex: completed.decidedBy } : {}),
        });
      }
    }
  }
  return { requestId, status, text, toolCalls };
}

/**
 * Run the calls of one model step in order. Every call gets exactly one result, in call
 * order, also when the prompt is aborted or interrupted, so the next request is well formed.
 * @returns whether a denial interrupted the prompt.
 * @throws the hook's failure when a tool hook failed and `toolHookErrors` is `'reject'`
 *   (after every call got its result: the calls after it did not run).
 */
async function runToolCalls(
  state: PromptState,
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
  try {
    for (const call of calls) {
      if (interrupted || rejectWith) {
        const why = interrupted
          ? 'an earlier call was denied with interrupt'
          : 'a hook of an earlier call failed';
        push(call, cancelledResult(call.toolName, why));
        records.push({
          toolUseId: call.toolUseId,
          toolName: call.toolName,
          toolInput: call.input,
          status: 'cancelled',
        });
        continue;
      }
      const outcome = await runToolCall(state, call, requestId, (ran) => (executed = ran));
      executed = undefined;
      push(call, outcome.result);
      records.push(outcome.record);
      interrupted = outcome.interrupt;
      rejectWith = outcome.rejectWith;
    }
  } finally {
    // Aborted after the current call's tool ran: the model learns what really happened.
    const ran = executed as ToolCallOutcome | undefined;
    if (ran && results.length < calls.length) {
      const call = calls[results.length]!;
      push(call, {
        ...ran.result,
        model: `${ran.result.model}\n[the prompt was aborted after this tool ran]`,
      });
      records.push(ran.record);
    }
    for (const call of calls.slice(results.length)) {
      push(call, cancelledResult(call.toolName, 'the prompt was aborted'));
      records.push({
        toolUseId: call.toolUseId,
        toolName: call.toolName,
        toolInput: call.input,
        status: 'cancelled',
      });
    }
    state.addMessage({ role: 'tool', results });
  }
  if (rejectWith) throw rejectWith;
  return interrupted;
}

function modelFailure(error: unknown): unknown {
  // An abort or close cancelled the step: that is not a model failure.
  if (isCancellation(error) || !(error instanceof ActivityFailure)) return error;
  const cause = error.cause;
  const detail =
    cause instanceof ApplicationFailure
      ? (cause.details?.[0] as SerializedError | undefined)
      : undefined;
  if (detail && typeof detail.name === 'string' && typeof detail.message === 'string')
    return toFailure(detail);
  const message = cause?.message ?? error.message;
  return toFailure({
    name: 'ModelError',
    code: 'MODEL_ERROR',
    message: `Model step failed: ${message}`,
  });
}
