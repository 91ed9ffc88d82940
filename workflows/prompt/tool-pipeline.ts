/**
 * One tool call, durably (contract §5–7): PreToolUse -> permission (PermissionRequest hook,
 * then the policy, maybe a person) -> execution -> PostToolUse or PostToolUseFailure. Every
 * call ends in exactly one result; only an abort (cancellation) escapes.
 *
 * @module
 */
import { isCancellation } from '@temporalio/workflow';
import type { ToolCall } from '../../src/common/conversation.js';
import type { SerializedError } from '../../src/common/errors.js';
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
  ToolCallDescription,
} from '../../src/common/activity-io.js';
import type { ToolResult } from '../../src/common/types.js';
import { unlistedMcpToolMessage } from '../../src/common/mcp.js';
import { describeMcpCall, mcpCallOf } from './mcp-calls.js';
import { describeToolCallActivity, describeToolCallOnQueueActivity } from '../activity-options.js';
import { dispatchEvent, inlineCancelled, settleInline } from './dispatch.js';
import { askPerson, deniedResult, policyDecision, workflowDecision } from './tool-permission.js';
import {
  identityFields,
  versionRefusalOf,
  withRefusalRetries,
} from '../session/version-refusal.js';
import { describeTask, isTaskCall, runTaskCall, taskDescription } from './task-call.js';
import {
  end,
  hasCallbacks,
  hookFailed,
  type CallRun,
  type ToolCallOutcome,
  type ToolPipelineState,
} from './tool-call-run.js';
import { execute, inlinePostToolUse, inlineToolDetailOf } from './tool-execute.js';

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
