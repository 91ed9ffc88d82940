/**
 * The agent's spans: their names, their attributes, and the one way they are made.
 *
 * Client side: `session.create`, `session.close` and `send` (one trace per send: Temporal's
 * `StartWorkflowUpdate:send`, the workflow's `HandleUpdate:send` and every activity the
 * prompt ran are its descendants). Worker side, each the child of Temporal's `RunActivity`
 * span: `hook <Event>`, `model.step`, `permission <Tool>`, `tool <Tool>`.
 *
 * Spans carry names, ids, counts, decisions and durations, not content: no prompt, tool
 * input or output, hook reason or model text (with encryption on, those are sealed in
 * history; a span would carry them in the clear). A span that failed records its error as
 * OpenTelemetry's `exception` event and its status, by name and code only (`errorLabel`):
 * an error's message may quote a prompt, a tool input or a hook's reason.
 *
 * @module
 */
import { errorLabel } from '../common/error-label.js';
import type { Attributes, Span } from '@opentelemetry/api';
import type { AgentTracing } from './tracing.js';

/** Attribute names of the agent's spans (`durable_agent.*`). */
export const SpanAttributes = {
  sessionId: 'durable_agent.session.id',
  agentName: 'durable_agent.agent.name',
  agentVersion: 'durable_agent.agent.version',
  requestId: 'durable_agent.request.id',
  sendStatus: 'durable_agent.send.status',
  sendToolCalls: 'durable_agent.send.tool_calls',
  hookEvent: 'durable_agent.hook.event',
  hookTool: 'durable_agent.hook.tool',
  hookToolUseId: 'durable_agent.hook.tool_use_id',
  hookCallbacks: 'durable_agent.hook.callbacks',
  hookBudgetMs: 'durable_agent.hook.budget_ms',
  hookOutcome: 'durable_agent.hook.outcome',
  hookDecision: 'durable_agent.hook.decision',
  hookDecidedBy: 'durable_agent.hook.decided_by',
  hookDurationMs: 'durable_agent.hook.duration_ms',
  hookModifiedInput: 'durable_agent.hook.modified_input',
  hookModifiedOutput: 'durable_agent.hook.modified_output',
  modelName: 'durable_agent.model.name',
  modelStep: 'durable_agent.model.step',
  modelStepIndex: 'durable_agent.model.step_index',
  promptIndex: 'durable_agent.prompt.index',
  modelFinishReason: 'durable_agent.model.finish_reason',
  modelToolCalls: 'durable_agent.model.tool_calls',
  modelInputTokens: 'durable_agent.model.usage.input_tokens',
  modelOutputTokens: 'durable_agent.model.usage.output_tokens',
  modelTotalTokens: 'durable_agent.model.usage.total_tokens',
  modelUsageEstimated: 'durable_agent.model.usage.estimated',
  /** The prefix of a cap's remaining after the step: `durable_agent.budget.remaining.<cap>`. */
  budgetRemaining: 'durable_agent.budget.remaining',
  toolName: 'durable_agent.tool.name',
  toolUseId: 'durable_agent.tool.use_id',
  toolStatus: 'durable_agent.tool.status',
  permissionBehavior: 'durable_agent.permission.behavior',
  permissionDecidedBy: 'durable_agent.permission.decided_by',
} as const;

/**
 * Run `fn` in a new active span `name` (a child of the active span): ended when `fn`
 * settles, its status `ERROR` with the error recorded (its name and code only, never its
 * message: see `errorLabel`) when `fn` throws, unless `benign`
 * says the error is an expected end (a cancellation), which leaves the status unset.
 */
export async function inSpan<T>(
  tracing: AgentTracing,
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  benign: (error: unknown) => boolean = () => false,
): Promise<T> {
  const { api, tracer } = tracing;
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      if (!benign(error)) {
        // Name and code only: a message may quote a prompt, an input or a hook's reason.
        const label = errorLabel(error);
        span.recordException({
          name: error instanceof Error ? error.name : 'Error',
          message: label,
        });
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: label });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}
