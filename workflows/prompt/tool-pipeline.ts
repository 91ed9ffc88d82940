/**
 * One tool call, durably (contract §5–7): PreToolUse -> permission (PermissionRequest hook,
 * then the policy, maybe a person) -> execution -> PostToolUse or PostToolUseFailure. Every
 * call ends in exactly one result; only an abort (cancellation) escapes.
 *
 * @module
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  isCancellation,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { ToolCall } from '../../src/common/conversation.js';
import { DEFAULTS } from '../../src/common/defaults.js';
import {
  hookErrorRecord,
  type HookErrorRecord,
  type SerializedError,
} from '../../src/common/errors.js';
import { HookEvent } from '../../src/common/hook-events.js';
import {
  applyPermissionRequest,
  applyPostToolUse,
  applyPostToolUseFailure,
  applyPreToolUse,
} from '../../src/common/hook-rules.js';
import type { JsonObject } from '../../src/common/json.js';
import { toolLabel } from '../../src/common/summaries.js';
import type { PermissionAnswer, PermissionResult } from '../../src/common/permission.js';
import type {
  DispatchHookInput,
  ExecuteToolOutput,
  HookDispatchOutcome,
  InlineToolDetail,
  ToolCallDescription,
} from '../../src/common/activity-io.js';
import type { ToolCallRecord } from '../../src/common/messages.js';
import type { ToolResult } from '../../src/common/types.js';
import { unlistedMcpToolMessage, type McpToolList } from '../../src/common/mcp.js';
import { describeMcpCall, mcpCallOf, mcpIdempotent, mcpRefOf, type McpCall } from './mcp-calls.js';
import {
  describeToolCallActivity,
  describeToolCallOnQueueActivity,
  executeToolActivity,
} from '../activity-options.js';
import { dispatchEvent, inlineCancelled, inlineDispatchInput, settleInline } from './dispatch.js';
import { failureMessage, toFailure } from '../session/failures.js';
import {
  askPerson,
  deniedResult,
  policyDecision,
  workflowDecision,
  type PendingPermissionEntry,
} from './tool-permission.js';
import { takeStreamEvents } from '../session/stream-outbox.js';
import {
  identityFields,
  versionRefusalOf,
  withRefusalRetries,
} from '../session/version-refusal.js';
import {
  describeTask,
  isTaskCall,
  runTaskCall,
  taskDescription,
  type TaskCallState,
} from './task-call.js';

/** The session state the pipeline reads and writes. */
export interface ToolPipelineState extends TaskCallState {
  pendingPermissions: Map<string, PendingPermissionEntry>;
  /** The MCP tools the session started with (`mcpServers`); absent without MCP servers. */
  mcpTools?: McpToolList;
  /**
   * Decided once a run (`patched('hot-path-0.2.0')` at its start): stages with nothing to do
   * end without an `await` (no hook callbacks for the event, an MCP call's description, a
   * decision made in the workflow). Histories recorded before 0.2 take every stage's `await`.
   */
  skipIdleStages?: boolean;
}

/** How one call ended. */
export interface ToolCallOutcome {
  result: ToolResult;
  record: ToolCallRecord;
  /** A denial asked to stop the running prompt (`interrupt: true`). */
  interrupt: boolean;
  /** A hook of the call failed and `toolHookErrors` is `'reject'`: the send rejects with this. */
  rejectWith?: ApplicationFailure;
}

/** One call on its way through the pipeline. */
interface CallRun {
  readonly state: ToolPipelineState;
  readonly call: ToolCall;
  readonly tags: { toolUseId: string; toolName: string; requestId: string };
  /** The input as it stands now: PreToolUse, PermissionRequest and the policy may edit it. */
  input: JsonObject;
  /** What the call is (its kind, the paths it touches), once described. */
  description?: ToolCallDescription;
  /** Set when it calls an MCP tool of a session with MCP servers. */
  readonly mcp: McpCall | undefined;
  /** `mcpServer` and `mcpTool` for its hooks' inputs, when it calls an MCP tool. */
  readonly mcpFields: { mcpServer?: string; mcpTool?: string };
}

/** Run one tool call through the whole pipeline. Rethrows only cancellation. */
export async function runToolCall(
  state: ToolPipelineState,
  call: ToolCall,
  requestId: string,
  onExecuted: (outcome: ToolCallOutcome) => void = () => undefined,
): Promise<ToolCallOutcome> {
  const { toolName, toolUseId } = call;
  const mcp = mcpCallOf(state, call);
  const run: CallRun = {
    state,
    call,
    tags: { toolUseId, toolName, requestId },
    input: call.input,
    mcp,
    mcpFields: mcp ? { mcpServer: mcp.server, mcpTool: mcp.tool } : {},
  };
  // Each stage ends the call with an outcome, or lets it go on.
  let ended: ToolCallOutcome | undefined;
  if (state.skipIdleStages) {
    // The same stages, each awaited only when it has something to wait for.
    ended =
      (hasCallbacks(state, HookEvent.PreToolUse) ? await preToolUse(run) : undefined) ??
      (run.mcp || isTaskCall(state, call) ? describedNow(run) : await describe(run)) ??
      (hasCallbacks(state, HookEvent.PermissionRequest) ? await permissionRequest(run) : undefined);
    if (!ended) {
      const decided = workflowDecision(state, toolUseId, toolName, run.description!, requestId);
      ended =
        decided && decided.behavior !== 'ask'
          ? permitted(run, decided)
          : await permission(run, decided);
    }
  } else {
    ended =
      (await preToolUse(run)) ??
      (await describe(run)) ??
      (await permissionRequest(run)) ??
      (await permission(run));
  }
  if (ended) return ended;
  if (isTaskCall(state, call)) {
    // A sub-agent instead of executeTool; its PostToolUse is never inline (no activity).
    const result = await runTaskCall(state, call, run.input, requestId);
    onExecuted(end(run, result, result.status === 'success' ? 'success' : 'error'));
    return result.status === 'success' ? postToolUse(run, result) : postToolUseFailure(run, result);
  }
  const hook = inlinePostToolUse(run);
  let executed: ExecuteToolOutput;
  try {
    executed = await execute(run, hook);
  } catch (error) {
    // Aborted while its inline PostToolUse callbacks ran: the tool ran, and its result stands.
    const ran = hook && inlineToolDetailOf(error);
    if (!ran) throw error;
    onExecuted(end(run, ran.inlineTool, 'success'));
    throw inlineCancelled(state, hook, run.tags, error, ran.durationMs);
  }
  const { hook: decided, ...result } = executed;
  // The tool ran: if the prompt is aborted from here on, its result still stands.
  const ran = end(run, result, result.status === 'success' ? 'success' : 'error');
  onExecuted(ran);
  if (state.skipIdleStages) {
    const event =
      result.status === 'success' ? HookEvent.PostToolUse : HookEvent.PostToolUseFailure;
    if (!hasCallbacks(state, event)) return ran;
  }
  if (result.status !== 'success') return postToolUseFailure(run, result);
  // A worker of an SDK from before inline dispatch ran the tool alone: dispatched as usual.
  return postToolUse(run, result, hook && decided ? { hook, outcome: decided } : undefined);
}

/** Whether the agent has callbacks for `event` (a dispatch of it would do nothing). */
function hasCallbacks(state: ToolPipelineState, event: HookEvent): boolean {
  return (state.input.hookCounts[event] ?? 0) > 0;
}

/** The inline PostToolUse dispatch the execution runs, when this session runs one. */
function inlinePostToolUse(run: CallRun): DispatchHookInput | undefined {
  if (!run.state.input.inlineDispatch?.includes(HookEvent.PostToolUse)) return undefined;
  const { toolName, toolUseId } = run.call;
  // The activity adds `toolOutput` once the tool succeeded.
  const payload = { toolName, toolInput: run.input, toolUseId, ...run.mcpFields };
  return inlineDispatchInput(run.state, HookEvent.PostToolUse, payload, run.tags);
}

/** What an execution cancelled during its inline callbacks carries: the tool's result. */
function inlineToolDetailOf(error: unknown): InlineToolDetail | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof CancelledFailure)) return undefined;
  const last = cause.details.at(-1) as Partial<InlineToolDetail> | null | undefined;
  const result = last?.inlineTool;
  if (!result || typeof result !== 'object' || result.status !== 'success') return undefined;
  return { inlineTool: result, durationMs: Number(last.durationMs) || 0 };
}

/** How the call ended: its result for the model and its record (`reason`: why it did not run). */
function end(
  run: CallRun,
  result: ToolResult,
  status: ToolCallRecord['status'],
  interrupt = false,
  hookError?: HookErrorRecord,
  reason?: string,
): ToolCallOutcome {
  const { toolUseId, toolName } = run.call;
  return {
    result,
    record: {
      toolUseId,
      toolName,
      toolInput: run.input,
      status,
      ...(result.display ? { display: result.display } : {}),
      ...(result.outputRef ? { outputRef: result.outputRef } : {}),
      ...(hookError ? { hookError } : {}),
      ...(reason !== undefined ? { reason } : {}),
    },
    interrupt,
  };
}

/**
 * A hook failed: the record says how; the model gets `result` (by default an error result
 * naming the hook), or, with `toolHookErrors: 'reject'`, the send rejects with the error.
 */
function hookFailed(
  run: CallRun,
  event: HookEvent,
  error: unknown,
  result?: ToolResult,
): ToolCallOutcome {
  const outcome = end(
    run,
    result ?? hookErrorResult(event, error),
    'error',
    false,
    hookErrorRecord(
      event,
      detailOf(error) ?? { name: 'HookError', message: failureMessage(error) },
    ),
  );
  if (run.state.input.toolHookErrors !== 'reject') return outcome;
  const rejectWith =
    error instanceof ApplicationFailure
      ? error
      : toFailure({
          name: 'HookError',
          code: 'HOOK_CALLBACK_FAILED',
          message: failureMessage(error),
          event,
        });
  return { ...outcome, rejectWith };
}

/** 1. PreToolUse: its hooks may skip or abort the call, or edit its input. */
async function preToolUse(run: CallRun): Promise<ToolCallOutcome | undefined> {
  const { toolName, toolUseId } = run.call;
  try {
    const merged = await dispatchEvent(
      run.state,
      HookEvent.PreToolUse,
      { toolName, toolInput: run.input, toolUseId, ...run.mcpFields },
      run.tags,
    );
    if (merged) {
      const decision = applyPreToolUse(toolName, run.input, merged);
      if (decision.kind !== 'run') {
        const status = decision.kind === 'skip' ? 'skipped' : 'aborted';
        return end(run, decision.result, status, false, undefined, decision.reason);
      }
      run.input = decision.toolInput;
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    return hookFailed(run, HookEvent.PreToolUse, error);
  }
  return undefined;
}

/** 2. What the call is: its kind and the paths it touches. An unknown tool ends here. */
async function describe(run: CallRun): Promise<ToolCallOutcome | undefined> {
  run.description = await describeCall(run);
  return unknownTool(run);
}

/** {@link describe} of a call described in the workflow (MCP, `Task`), without an `await`. */
function describedNow(run: CallRun): ToolCallOutcome | undefined {
  run.description = run.mcp ? describeMcpCall(run.mcp.recorded) : taskDescription();
  return unknownTool(run);
}

/** The end of a call whose tool the description says is unknown. */
function unknownTool(run: CallRun): ToolCallOutcome | undefined {
  const { toolName } = run.call;
  if (!run.description!.known) {
    // An MCP tool outside the list the session started with never reaches its server.
    const message = run.mcp
      ? unlistedMcpToolMessage(run.state.mcpTools, toolName)
      : `Unknown tool '${toolName}'`;
    return end(
      run,
      { status: 'error', model: message, error: { message, type: 'UnknownTool' } },
      'error',
    );
  }
  return undefined;
}

function describeCall(run: CallRun): Promise<ToolCallDescription> {
  if (isTaskCall(run.state, run.call)) return describeTask();
  if (run.mcp) return Promise.resolve(describeMcpCall(run.mcp.recorded));
  return describeCallOf(run.state, run.call.toolName, run.input);
}

/** 3. PermissionRequest hooks observe (and may block) the request. */
async function permissionRequest(run: CallRun): Promise<ToolCallOutcome | undefined> {
  const { toolName, toolUseId } = run.call;
  const description = run.description!;
  try {
    const merged = await dispatchEvent(
      run.state,
      HookEvent.PermissionRequest,
      {
        toolName,
        toolInput: run.input,
        toolKind: description.kind,
        affectedPaths: description.affectedPaths,
        toolUseId,
        ...run.mcpFields,
      },
      run.tags,
    );
    if (merged) {
      const decision = applyPermissionRequest(toolName, run.input, merged);
      run.input = decision.toolInput;
      if (decision.kind === 'deny') {
        const { message, interrupt } = decision;
        return end(run, deniedResult(toolName, message), 'denied', interrupt, undefined, message);
      }
      // Edited input: the policy must judge the paths the call will really touch.
      if (merged.modifiedInput) run.description = await describeCall(run);
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    return hookFailed(run, HookEvent.PermissionRequest, error);
  }
  return undefined;
}

/**
 * 4. The policy decides (`decided`: it has, in the workflow); `ask` waits durably for a
 * person.
 */
async function permission(
  run: CallRun,
  decided?: PermissionResult,
): Promise<ToolCallOutcome | undefined> {
  const { state, input } = run;
  const { toolName, toolUseId } = run.call;
  const description = run.description!;
  let decision: PermissionResult | PermissionAnswer =
    decided ??
    (await policyDecision(state, toolUseId, toolName, input, description, run.tags.requestId));
  if (decision.behavior === 'ask') {
    decision = await askPerson(
      state,
      {
        toolUseId,
        toolName,
        input,
        kind: description.kind,
        paths: description.affectedPaths,
        message: decision.message,
      },
      run.tags.requestId,
    );
  }
  return permitted(run, decision);
}

/** The call after its permission decision: ended when denied, its input as approved if not. */
function permitted(
  run: CallRun,
  decision: Exclude<PermissionResult, { behavior: 'ask' }> | PermissionAnswer,
): ToolCallOutcome | undefined {
  const { toolName } = run.call;
  if (decision.behavior === 'deny') {
    const message = decision.message ?? `Permission to run ${toolName} was denied`;
    const interrupt = decision.interrupt === true;
    return end(run, deniedResult(toolName, message), 'denied', interrupt, undefined, message);
  }
  if (decision.updatedInput) run.input = decision.updatedInput;
  return undefined;
}

/**
 * 5. Execution. A tool that could not run gives an error result, as a tool error does. With
 * `hook`, the activity runs that inline PostToolUse dispatch after a tool that succeeded.
 */
async function execute(run: CallRun, hook?: DispatchHookInput): Promise<ExecuteToolOutput> {
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
  return run.description?.kind === 'readonly' || mcpIdempotent(run.mcp);
}

/**
 * 6a. PostToolUse, after a call that succeeded; `inline`: its callbacks ran in the tool's
 * activity already, and this is what they reported.
 */
async function postToolUse(
  run: CallRun,
  ran: ToolResult,
  inline?: { hook: DispatchHookInput; outcome: HookDispatchOutcome },
): Promise<ToolCallOutcome> {
  const { toolName, toolUseId } = run.call;
  let result = ran;
  try {
    const merged = inline
      ? settleInline(run.state, inline.hook, run.tags, inline.outcome)
      : await dispatchEvent(
          run.state,
          HookEvent.PostToolUse,
          {
            toolName,
            toolInput: run.input,
            toolOutput: result.model,
            toolUseId,
            ...run.mcpFields,
          },
          run.tags,
        );
    if (merged) result = applyPostToolUse(result, merged);
  } catch (error) {
    if (isCancellation(error)) throw error;
    return hookFailed(run, HookEvent.PostToolUse, error);
  }
  return end(run, result, result.status === 'success' ? 'success' : 'error');
}

/** 6b. PostToolUseFailure, after a call that failed. */
async function postToolUseFailure(
  run: CallRun,
  failed: Extract<ToolResult, { status: 'error' }>,
): Promise<ToolCallOutcome> {
  const { toolName, toolUseId } = run.call;
  let result: ToolResult = failed;
  try {
    const error: SerializedError = { name: failed.error.type, message: failed.error.message };
    if (failed.error.code) error.code = failed.error.code;
    const merged = await dispatchEvent(
      run.state,
      HookEvent.PostToolUseFailure,
      {
        toolName,
        toolInput: run.input,
        toolOutput: failed.model,
        toolUseId,
        error: error as unknown as JsonObject,
        ...run.mcpFields,
      },
      run.tags,
    );
    if (merged) result = applyPostToolUseFailure(failed, merged);
  } catch (error) {
    if (isCancellation(error)) throw error;
    // The seed: a PostToolUseFailure hook that throws is logged (the worker logs every failed
    // dispatch), and the tool error kept.
    return hookFailed(run, HookEvent.PostToolUseFailure, error, result);
  }
  return end(run, result, 'error');
}

/**
 * Kind and affected paths of a call, from the worker that runs this workflow task (a local
 * activity); when that worker runs another version it refuses, and a worker of the session's
 * version answers through the task queue.
 * @throws ApplicationFailure `WORKER_VERSION_MISMATCH` when none does within the hook budget.
 */
async function describeCallOf(
  state: ToolPipelineState,
  toolName: string,
  input: JsonObject,
): Promise<ToolCallDescription> {
  const summary = `describe ${toolLabel(toolName, input)}`;
  const describeInput = {
    agentName: state.input.agentName,
    sessionId: state.input.sessionId,
    ...identityFields(state.input),
    toolName,
    input,
  };
  try {
    return await describeToolCallActivity(summary)(describeInput);
  } catch (error) {
    if (!versionRefusalOf(error)) throw error;
    return withRefusalRetries(
      state.input,
      { task: `the description of a ${toolName} call` },
      state.input.hookTimeoutMs,
      () => describeToolCallOnQueueActivity(state.taskQueue, false, summary)(describeInput),
    );
  }
}

/** The result given to a call that never ran because its prompt was aborted or interrupted. */
export function cancelledResult(toolName: string, why: string): ToolResult {
  const message = `Tool ${toolName} did not run: ${why}`;
  return { status: 'error', model: message, error: { message, type: 'Cancelled' } };
}

/** The serialized error a failed dispatch raised, when it raised one of ours. */
function detailOf(error: unknown): SerializedError | undefined {
  if (!(error instanceof ApplicationFailure)) return undefined;
  const detail = error.details?.[0] as SerializedError | undefined;
  return detail && typeof detail.name === 'string' && typeof detail.message === 'string'
    ? detail
    : undefined;
}

function hookErrorResult(event: HookEvent, error: unknown): ToolResult {
  const detail = detailOf(error);
  const message = `${event} hook failed: ${detail?.message ?? failureMessage(error)}`;
  return {
    status: 'error',
    model: message,
    error: {
      message,
      type: detail?.name ?? 'HookError',
      ...(detail?.code ? { code: detail.code } : {}),
    },
  };
}
