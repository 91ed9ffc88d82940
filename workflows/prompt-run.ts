/**
 * One `send()`: UserPromptSubmit, the model loop, then TaskCompleted (contract §8).
 *
 * @module
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { SerializedError } from '../src/common/errors.js';
import { HookEvent } from '../src/common/hook-events.js';
import {
  applyTaskCompleted,
  applyUserPromptSubmit,
  describePrompt,
} from '../src/common/hook-rules.js';
import type { SendRequest, SendResult, SendStatus } from '../src/common/protocol.js';
import { modelStepActivity } from './activity-options.js';
import { dispatchEvent, type DispatchState } from './dispatch.js';
import { hookFailure, toFailure } from './failures.js';

/** Run one prompt to its end. Cancellation (abort) propagates to the caller. */
export async function runPrompt(
  state: DispatchState,
  request: SendRequest,
  promptIndex: number,
): Promise<SendResult> {
  const { requestId } = request;
  let prompt = request.prompt;
  const original = describePrompt(prompt);
  const submitted = await dispatchEvent(
    state,
    HookEvent.UserPromptSubmit,
    { ...original },
    { requestId },
  );
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

  let text = '';
  let status: SendStatus = 'completed';
  for (let step = 0; ; step++) {
    if (step >= state.input.maxTurns) {
      status = 'max_turns';
      break;
    }
    let output;
    try {
      output = await modelStepActivity(state.taskQueue)({
        sessionId: state.input.sessionId,
        agentName: state.input.agentName,
        requestId,
        step,
        promptIndex,
        modelStepIndex: state.modelSteps++,
        ...(step === 0 ? { prompt } : {}),
      });
    } catch (error) {
      throw modelFailure(error);
    }
    text = output.text;
    if (output.finishReason !== 'tool-calls') break;
  }

  if (status === 'completed') {
    const sent = describePrompt(prompt);
    const completed = await dispatchEvent(
      state,
      HookEvent.TaskCompleted,
      {
        taskId: requestId,
        taskDescription: sent.userPrompt,
        hasImages: sent.hasImages,
        imageCount: sent.imageCount,
        resultSummary: text,
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
  return { requestId, status, text, toolCalls: [] };
}

function modelFailure(error: unknown): unknown {
  if (!(error instanceof ActivityFailure)) return error;
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
