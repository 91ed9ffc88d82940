/**
 * The worker's spans (tracing on, `src/tracing/`): each of `dispatchHook`, `modelStep`,
 * `checkPermission` and `executeTool`, wrapped, runs in a span of its own, a child of
 * Temporal's `RunActivity` span, with what its outcome says: a dispatch's event, tool,
 * callbacks, budget, outcome, decision and deciding callback; a model step's finish reason
 * and tool calls; a permission check's answer; a tool's status. Nothing here changes what
 * an activity returns or throws.
 *
 * @module
 */
import { CancelledFailure } from '@temporalio/common';
import type { Attributes, Span } from '@opentelemetry/api';
import { mergeHookOutputs } from '../src/common/hook-rules.js';
import type {
  CheckPermissionInput,
  CheckPermissionOutput,
  DispatchHookInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  HookDispatchOutcome,
  ModelStepInput,
  ModelStepOutput,
} from '../src/common/activity-io.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import { inSpan, SpanAttributes as A } from '../src/tracing/spans.js';
import { modelStepBudgetAttributes } from '../src/tracing/budget-attributes.js';
import type { AgentTracing } from '../src/tracing/tracing.js';

type Activity<I, O> = (input: I) => Promise<O>;

interface Traced {
  dispatchHook: Activity<DispatchHookInput, HookDispatchOutcome>;
  modelStep: Activity<ModelStepInput, ModelStepOutput>;
  checkPermission: Activity<CheckPermissionInput, CheckPermissionOutput>;
  executeTool: Activity<ExecuteToolInput, ExecuteToolOutput>;
}

const cancelled = (error: unknown) => error instanceof CancelledFailure;

/** `activities` with their spans; as given when tracing is off. */
export function withTracing<T extends Traced>(
  tracing: AgentTracing | undefined,
  registry: AgentRegistry,
  activities: T,
): T {
  if (!tracing) return activities;
  const { dispatchHook, modelStep, checkPermission, executeTool } = activities;
  return {
    ...activities,
    dispatchHook: (input: DispatchHookInput) => tracedDispatch(tracing, dispatchHook, input),
    modelStep: (input: ModelStepInput) => tracedModelStep(tracing, registry, modelStep, input),
    checkPermission: (input: CheckPermissionInput) =>
      tracedPermission(tracing, checkPermission, input),
    executeTool: (input: ExecuteToolInput) => tracedExecution(tracing, executeTool, input),
  };
}

/** The session attributes every span carries: session id, agent name, request id. */
function sessionOf(input: { sessionId?: string; agentName: string; requestId?: string }) {
  return {
    ...(input.sessionId !== undefined ? { [A.sessionId]: input.sessionId } : {}),
    [A.agentName]: input.agentName,
    ...(input.requestId !== undefined ? { [A.requestId]: input.requestId } : {}),
  };
}

/** `dispatchHook` in a `hook <event>` span, with its outcome and decision. */
function tracedDispatch(
  tracing: AgentTracing,
  dispatchHook: Traced['dispatchHook'],
  input: DispatchHookInput,
): Promise<HookDispatchOutcome> {
  const { toolName, toolUseId } = input.payload;
  const attributes: Attributes = {
    ...sessionOf(input),
    ...(input.version !== undefined ? { [A.agentVersion]: input.version } : {}),
    [A.hookEvent]: input.event,
    ...(typeof toolName === 'string' ? { [A.hookTool]: toolName } : {}),
    ...(typeof toolUseId === 'string' ? { [A.hookToolUseId]: toolUseId } : {}),
    [A.hookCallbacks]: input.callbackCount,
    [A.hookBudgetMs]: input.budgetMs,
  };
  return inSpan(
    tracing,
    `hook ${input.event}`,
    attributes,
    async (span) => {
      try {
        const outcome = await dispatchHook(input);
        span.setAttributes(dispatchAttributes(outcome));
        if (outcome.status !== 'completed') {
          span.setStatus({
            code: tracing.api.SpanStatusCode.ERROR,
            // The code, not the message (which may quote the callback's error or input).
            message:
              outcome.status === 'error'
                ? (outcome.error.code ?? outcome.error.name ?? 'HookError')
                : `Hook ${input.event} exceeded ${input.budgetMs}ms`,
          });
        }
        return outcome;
      } catch (error) {
        span.setAttributes(
          cancelled(error)
            ? { [A.hookOutcome]: 'cancelled', [A.hookDecision]: 'cancelled' }
            : { [A.hookOutcome]: 'error', [A.hookDecision]: 'error' },
        );
        throw error;
      }
    },
    cancelled,
  );
}

/** `modelStep` in a `model.step` span, with its finish reason and tool call count. */
function tracedModelStep(
  tracing: AgentTracing,
  registry: AgentRegistry,
  modelStep: Traced['modelStep'],
  input: ModelStepInput,
): Promise<ModelStepOutput> {
  return inSpan(
    tracing,
    'model.step',
    {
      ...sessionOf(input),
      [A.modelStep]: input.step,
      [A.modelStepIndex]: input.modelStepIndex,
      [A.promptIndex]: input.promptIndex,
      ...modelNameOf(registry, input),
    },
    async (span) => {
      const output = await modelStep(input);
      span.setAttributes({
        [A.modelFinishReason]: output.finishReason,
        [A.modelToolCalls]: output.toolCalls?.length ?? 0,
        // With a budget: the step's usage and what is left once it is counted.
        ...(input.budget ? modelStepBudgetAttributes(input.budget, output.usage) : {}),
      });
      return output;
    },
    cancelled,
  );
}

/** `checkPermission` in a `permission <tool>` span, with the answer's behavior. */
function tracedPermission(
  tracing: AgentTracing,
  checkPermission: Traced['checkPermission'],
  input: CheckPermissionInput,
): Promise<CheckPermissionOutput> {
  return inSpan(
    tracing,
    `permission ${input.toolName}`,
    {
      ...sessionOf(input),
      [A.toolName]: input.toolName,
      [A.toolUseId]: input.toolUseId,
      [A.permissionDecidedBy]:
        input.handler === 'session' ? 'session permission handler' : 'agent permission',
    },
    async (span) => {
      const output = await checkPermission(input);
      // A check that failed denies the call (the workflow says why).
      span.setAttribute(A.permissionBehavior, output.ok ? output.result.behavior : 'deny');
      if (!output.ok) setError(tracing, span, output.error.name);
      return output;
    },
    cancelled,
  );
}

/** `executeTool` in a `tool <name>` span, with the result's status. */
function tracedExecution(
  tracing: AgentTracing,
  executeTool: Traced['executeTool'],
  input: ExecuteToolInput,
): Promise<ExecuteToolOutput> {
  return inSpan(
    tracing,
    `tool ${input.toolName}`,
    { ...sessionOf(input), [A.toolName]: input.toolName, [A.toolUseId]: input.toolUseId },
    async (span) => {
      const result = await executeTool(input);
      span.setAttribute(A.toolStatus, result.status);
      if (result.status === 'error') setError(tracing, span, result.error.type ?? 'ToolError');
      return result;
    },
    cancelled,
  );
}

/** The attributes a dispatch's outcome gives its span, decided as the workflow decides. */
function dispatchAttributes(outcome: HookDispatchOutcome): Attributes {
  const common = {
    [A.hookCallbacks]: outcome.callbackCount,
    [A.hookDurationMs]: outcome.durationMs,
  };
  switch (outcome.status) {
    case 'completed': {
      const merged = mergeHookOutputs(outcome.outputs);
      return {
        ...common,
        [A.hookOutcome]: 'completed',
        [A.hookDecision]: merged.action,
        ...(merged.decidedBy !== undefined ? { [A.hookDecidedBy]: merged.decidedBy } : {}),
        ...(merged.modifiedInput !== undefined ? { [A.hookModifiedInput]: true } : {}),
        ...(merged.hasModifiedOutput ? { [A.hookModifiedOutput]: true } : {}),
      };
    }
    case 'error':
      return {
        ...common,
        [A.hookOutcome]: 'error',
        [A.hookDecision]: 'error',
        [A.hookDecidedBy]: outcome.callbackIndex,
      };
    case 'timeout':
      return {
        ...common,
        [A.hookOutcome]: 'timeout',
        [A.hookDecision]: 'timeout',
        ...(outcome.callbackIndex !== undefined
          ? { [A.hookDecidedBy]: outcome.callbackIndex }
          : {}),
      };
  }
}

function modelNameOf(registry: AgentRegistry, input: ModelStepInput): Attributes {
  try {
    return { [A.modelName]: registry.agent(input.agentName, input.version).model.name };
  } catch {
    return {}; // the activity itself says that this worker lacks the agent
  }
}

function setError(tracing: AgentTracing, span: Span, message: string): void {
  span.setStatus({ code: tracing.api.SpanStatusCode.ERROR, message });
}
