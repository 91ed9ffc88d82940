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
import type { SerializedError } from '../../src/common/errors.js';
import { HookEvent } from '../../src/common/hook-events.js';
import {
  applyTaskCompleted,
  applyUserPromptSubmit,
  clipText,
  describePrompt,
} from '../../src/common/hook-rules.js';
import type { ConversationMessage } from '../../src/common/conversation.js';
import type {
  DispatchHookInput,
  HookDispatchOutcome,
  ModelStepOutput,
} from '../../src/common/activity-io.js';
import type {
  SendRequest,
  SendResult,
  SendStatus,
  ToolCallRecord,
} from '../../src/common/messages.js';
import type { Prompt } from '../../src/common/types.js';
import type { ContextStamp } from '../../src/common/context-stamp.js';
import type { ContextStamper } from '../session/context-sync.js';
import type { JsonObject } from '../../src/common/json.js';
import type { MergedHookResult } from '../../src/common/hook-rules.js';
import { modelStepActivity } from '../activity-options.js';
import { dispatchEvent, dispatchInline, hasCallbacks, inlineOutcomeOf } from './dispatch.js';
import { runToolCalls, type ToolCallsState } from './tool-calls.js';
import { hookFailure, toFailure } from '../session/failures.js';
import { takeStreamEvents } from '../session/stream-outbox.js';
import { identityFields, withRefusalRetries } from '../session/version-refusal.js';
import { DEFAULTS } from '../../src/common/defaults.js';
import type { BudgetExceeded } from '../../src/common/budgets.js';
import { budgetHookInput, budgetStepInput, reserveModelStep, settleModelStep } from './budget.js';
import { hasSharedBudgets, reserveSharedStep } from './shared-budget.js';

/** The session state a prompt reads and writes. */
export interface PromptState extends ToolCallsState {
  /** Stamp the context a model step reads and hand it to this worker's cache (`context-sync.ts`). */
  contextStamp?: ContextStamper;
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
  // With a budget: what is left goes to UserPromptSubmit; the last prompt's refusal is past.
  const original = { ...describePrompt(prompt), ...budgetHookInput(state) };
  if (state.budget) delete state.budget.exceeded;
  // The first step's output when an inline dispatch called the model already.
  let first: ModelStepOutput | undefined;
  // An event without callbacks is not dispatched at all (no await: see hasCallbacks).
  if (hasCallbacks(state, HookEvent.UserPromptSubmit)) {
    let submitted: MergedHookResult;
    if (runsInline(state)) {
      ({ merged: submitted, first } = await submitInline(state, request, promptIndex, original));
    } else {
      const payload = { ...original };
      submitted = (await dispatchEvent(state, HookEvent.UserPromptSubmit, payload, { requestId }))!;
    }
    prompt = submittedPrompt(prompt, submitted);
  }

  state.addMessage({ role: 'user', content: prompt });
  let text = '';
  let status: SendStatus = 'completed';
  let exceeded: BudgetExceeded | undefined;
  for (let step = 0; ; step++) {
    if (step >= state.input.maxTurns) {
      status = 'max_turns';
      break;
    }
    let output: ModelStepOutput;
    if (step === 0 && first) {
      output = first;
    } else {
      // A step whose worst case would pass a cap is never scheduled.
      const reserved = reserveModelStep(state);
      if (reserved && 'refused' in reserved) {
        exceeded = reserved.refused;
        break;
      }
      // A shared budget's lease must hold it too (only sessions with one await here).
      if (reserved && hasSharedBudgets(state)) {
        exceeded = await reserveSharedStep(state, reserved.reservation.worst);
        if (exceeded) break;
      }
      try {
        output = await modelStep(state, requestId, step, promptIndex);
      } catch (error) {
        throw modelFailure(error);
      }
      if (reserved) settleModelStep(state, reserved.reservation, output);
    }
    const calls = output.toolCalls ?? [];
    state.addMessage({ role: 'assistant', text: output.text, toolCalls: calls });
    text = output.text;
    if (calls.length === 0) break;
    if (await runToolCalls(state, calls, requestId, toolCalls)) {
      status = 'interrupted';
      break;
    }
    exceeded = state.budget?.exceeded;
    if (exceeded) break;
  }
  if (exceeded) {
    status = 'budget_exceeded';
    return { requestId, status, text, toolCalls, budgetExceeded: { ...exceeded } };
  }

  if (status === 'completed' && hasCallbacks(state, HookEvent.TaskCompleted)) {
    const payload = taskCompletedPayload(requestId, prompt, text);
    const completed = await dispatchEvent(state, HookEvent.TaskCompleted, payload, { requestId });
    if (completed) failIfTaskFailed(completed);
  }
  return { requestId, status, text, toolCalls };
}

/**
 * The prompt UserPromptSubmit's merged outputs leave (as sent, or as a callback rewrote it).
 * @throws ApplicationFailure `HOOK_ABORTED` when a callback rejected it.
 */
function submittedPrompt(prompt: Prompt, submitted: MergedHookResult): Prompt {
  const decision = applyUserPromptSubmit(prompt, submitted);
  if (decision.kind === 'reject') {
    throw hookFailure('HOOK_ABORTED', decision.reason, {
      event: HookEvent.UserPromptSubmit,
      callbackIndex: decision.decidedBy,
    });
  }
  return decision.prompt;
}

/** TaskCompleted's payload for the prompt `requestId` that answered `text`. */
function taskCompletedPayload(requestId: string, prompt: Prompt, text: string) {
  const sent = describePrompt(prompt);
  return {
    taskId: requestId,
    taskDescription: clipText(sent.userPrompt),
    hasImages: sent.hasImages,
    imageCount: sent.imageCount,
    resultSummary: clipText(text),
    success: true,
  };
}

/** @throws ApplicationFailure `TASK_FAILED` when a TaskCompleted callback failed the task. */
function failIfTaskFailed(completed: MergedHookResult): void {
  const decision = applyTaskCompleted(completed);
  if (decision.kind === 'fail') {
    throw hookFailure('TASK_FAILED', decision.reason, {
      event: HookEvent.TaskCompleted,
      ...(completed.decidedBy !== undefined ? { callbackIndex: completed.decidedBy } : {}),
    });
  }
}

/** Whether this session's UserPromptSubmit runs inline (and can: step 0 is allowed, no budget). */
function runsInline(state: PromptState): boolean {
  // With a budget, step 0 is reserved before it is scheduled, like every other step.
  return (
    state.budget === undefined &&
    state.input.inlineDispatch?.includes(HookEvent.UserPromptSubmit) === true &&
    state.contextStamp !== undefined &&
    state.input.maxTurns > 0
  );
}

/**
 * One model step, through the task queue (a worker of another version refuses it: scheduled
 * again). With `inline`, the step runs that dispatch first, against `inline.context`.
 */
function modelStep(
  state: PromptState,
  requestId: string,
  step: number,
  promptIndex: number,
  inline?: { hook: DispatchHookInput; context: ContextStamp },
): Promise<ModelStepOutput> {
  const what = `model step ${step + 1} of prompt ${promptIndex + 1}`;
  setCurrentDetails(`running ${what}`);
  const context = inline ? inline.context : state.contextStamp?.();
  const stepInput = {
    sessionId: state.input.sessionId,
    agentName: state.input.agentName,
    ...identityFields(state.input),
    requestId,
    step,
    promptIndex,
    modelStepIndex: state.modelSteps++,
    ...(context ? { context } : {}),
    ...takeStreamEvents(state, requestId),
    ...(inline ? { hook: inline.hook } : {}),
    // The MCP tools the session started with, by the list's digest.
    ...(state.mcpTools?.tools.length ? { mcpTools: state.mcpTools.digest } : {}),
    ...(state.mcpTools?.tools.length && state.input.mcpAllow
      ? { mcpAllow: state.input.mcpAllow }
      : {}),
    // With a budget: the provider's limit (the step's output then carries its usage), and
    // what is left, for the step's span.
    ...budgetStepInput(state),
  };
  const timeoutMs = state.input.modelTimeoutMs ?? DEFAULTS.modelTimeoutMs;
  return withRefusalRetries(
    state.input,
    { task: `model step ${stepInput.modelStepIndex}` },
    timeoutMs + (inline?.hook.budgetMs ?? 0),
    (eager) =>
      modelStepActivity(
        state.taskQueue,
        state.input.modelTimeoutMs,
        eager,
        what,
        inline?.hook.budgetMs,
        state.input.modelHeartbeatTimeoutMs,
      )(stepInput),
  );
}

/**
 * UserPromptSubmit inline (`hookDispatch: { UserPromptSubmit: 'inline' }`): the send's first
 * model step runs the callbacks, against the context stamped as it will be once the prompt is
 * added, and calls the model when they leave the prompt as it is (`first`). Otherwise the
 * step ends after them and the caller runs step 0 as usual.
 * @throws as `dispatchEvent` for the callbacks; a model failure as `modelFailure` makes it.
 */
async function submitInline(
  state: PromptState,
  request: SendRequest,
  promptIndex: number,
  payload: JsonObject,
): Promise<{ merged: MergedHookResult; first?: ModelStepOutput }> {
  const message: ConversationMessage = { role: 'user', content: request.prompt };
  const context = state.contextStamp!(message);
  // Whether the step took a model step index, and whether it called the model.
  let stepTaken = false;
  let modelCalled = false;
  try {
    const { merged, value } = await dispatchInline(
      state,
      HookEvent.UserPromptSubmit,
      payload,
      { requestId: request.requestId },
      async (hook) => {
        stepTaken = true;
        const output = await modelStep(state, request.requestId, 0, promptIndex, {
          hook,
          context,
        });
        modelCalled = output.hook !== undefined && output.deferred === undefined;
        return {
          outcome: output.hook ?? notRunInline(hook),
          value: modelCalled ? output : undefined,
        };
      },
    );
    return { merged, ...(value ? { first: value } : {}) };
  } catch (error) {
    // The callbacks accepted the prompt and the model call failed (or was cancelled): as for a
    // first step that failed, the prompt is in the conversation.
    if (inlineOutcomeOf(error)) {
      modelCalled = true;
      state.addMessage(message);
    }
    throw modelFailure(error);
  } finally {
    // A step that ran only the callbacks took no model step: its index is the next one's; and
    // the stamped context, which included the prompt, is not the state's.
    if (stepTaken && !modelCalled) state.modelSteps--;
    if (!modelCalled) state.contextStamp!.forget();
  }
}

/**
 * What a step that ignored its inline dispatch reports: a worker of an SDK from before inline
 * dispatches called the model without the callbacks. The send fails rather than go on as if
 * they had run.
 */
function notRunInline(hook: DispatchHookInput): HookDispatchOutcome {
  return {
    status: 'error',
    error: {
      name: 'HookError',
      code: 'HOOK_CALLBACKS_MISSING',
      message:
        `The worker that ran the first model step did not run its inline ${hook.event} ` +
        `callbacks (an SDK from before inline dispatch); every worker of a task queue must ` +
        `run the same agent definition and SDK.`,
    },
    callbackIndex: 0,
    callbackCount: 0,
    durationMs: 0,
  };
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
