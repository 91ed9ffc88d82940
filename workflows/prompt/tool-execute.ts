/**
 * 5. Execution, the tool pipeline's one activity of the tool itself (`executeTool`): its
 * input, the inline PostToolUse dispatch it may carry, and whether the call may run again
 * after a lost worker. Workflow code.
 *
 * @module
 */
import {
  ActivityFailure,
  CancelledFailure,
  isCancellation,
  setCurrentDetails,
} from '@temporalio/workflow';
import { DEFAULTS } from '../../src/common/defaults.js';
import { HookEvent } from '../../src/common/hook-events.js';
import { toolLabel } from '../../src/common/summaries.js';
import type {
  DispatchHookInput,
  ExecuteToolOutput,
  InlineToolDetail,
} from '../../src/common/activity-io.js';
import { mcpIdempotent, mcpRefOf } from './mcp-calls.js';
import { executeToolActivity } from '../activity-options.js';
import { inlineDispatchInput } from './dispatch.js';
import { failureMessage } from '../session/failures.js';
import { takeStreamEvents } from '../session/stream-outbox.js';
import { identityFields, withRefusalRetries } from '../session/version-refusal.js';
import type { CallRun } from './tool-call-run.js';

/** The inline PostToolUse dispatch the execution runs, when this session runs one. */
export function inlinePostToolUse(run: CallRun): DispatchHookInput | undefined {
  if (!run.state.input.inlineDispatch?.includes(HookEvent.PostToolUse)) return undefined;
  const { toolName, toolUseId } = run.call;
  // The activity adds `toolOutput` once the tool succeeded.
  const payload = { toolName, toolInput: run.input, toolUseId, ...run.mcpFields };
  return inlineDispatchInput(run.state, HookEvent.PostToolUse, payload, run.tags);
}

/** What an execution cancelled during its inline callbacks carries: the tool's result. */
export function inlineToolDetailOf(error: unknown): InlineToolDetail | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof CancelledFailure)) return undefined;
  const last = cause.details.at(-1) as Partial<InlineToolDetail> | null | undefined;
  const result = last?.inlineTool;
  if (!result || typeof result !== 'object' || result.status !== 'success') return undefined;
  return { inlineTool: result, durationMs: Number(last.durationMs) || 0 };
}

/**
 * 5. Execution. A tool that could not run gives an error result, as a tool error does. With
 * `hook`, the activity runs that inline PostToolUse dispatch after a tool that succeeded.
 */
export async function execute(run: CallRun, hook?: DispatchHookInput): Promise<ExecuteToolOutput> {
  const { state } = run;
  const { toolName, toolUseId } = run.call;
  try {
    const timeoutMs = state.input.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs;
    const label = toolLabel(toolName, run.input);
    setCurrentDetails(`running tool ${label}`);
    const mcp = mcpRefOf(state, run.mcp);
    const execInput = {
      sessionId: state.input.sessionId,
      agentName: state.input.agentName,
      ...identityFields(state.input),
      toolUseId,
      toolName,
      input: run.input,
      timeoutMs,
      requestId: run.tags.requestId,
      // The permission decision just made (a preset's, a person's) goes out with the tool.
      ...takeStreamEvents(state, run.tags.requestId),
      ...(hook ? { hook } : {}),
      ...(mcp ? { mcp } : {}),
      // Run again if lost: a read-only or idempotent call whose activity runs no callbacks.
      ...(!hook && idempotent(run) ? { idempotent: true as const } : {}),
    };
    return await withRefusalRetries(
      state.input,
      { task: `the execution of ${toolName}` },
      timeoutMs,
      (eager) =>
        executeToolActivity(
          state.taskQueue,
          timeoutMs,
          eager,
          `tool ${label}`,
          hook?.budgetMs,
          state.input.toolHeartbeatTimeoutMs,
        )(execInput),
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    const message = `Tool ${toolName} failed to run: ${failureMessage(error)}`;
    return { status: 'error', model: message, error: { message, type: 'ToolExecutionFailed' } };
  }
}

/** Whether the call may run twice with the effect of once: read-only, or marked idempotent. */
function idempotent(run: CallRun): boolean {
  const description = run.description;
  if (description?.idempotent !== undefined) return description.idempotent;
  return description?.kind === 'readonly' || mcpIdempotent(run.mcp);
}
