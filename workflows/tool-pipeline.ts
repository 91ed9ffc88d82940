/**
 * One tool call, durably (contract §5–7): PreToolUse -> permission (PermissionRequest hook,
 * then the policy, maybe a person) -> execution -> PostToolUse or PostToolUseFailure. Every
 * call ends in exactly one result; only an abort (cancellation) escapes.
 *
 * @module
 */
import { ApplicationFailure, condition, isCancellation, uuid4 } from '@temporalio/workflow';
import type { ToolCall } from '../src/common/conversation.js';
import { DEFAULTS } from '../src/common/defaults.js';
import {
  hookErrorRecord,
  type HookErrorRecord,
  type SerializedError,
} from '../src/common/errors.js';
import { HookEvent } from '../src/common/hook-events.js';
import {
  applyPermissionRequest,
  applyPostToolUse,
  applyPostToolUseFailure,
  applyPreToolUse,
} from '../src/common/hook-rules.js';
import type { JsonObject } from '../src/common/json.js';
import {
  presetDecision,
  type PendingPermission,
  type PermissionAnswer,
  type PermissionResult,
} from '../src/common/permission.js';
import type { ToolCallRecord } from '../src/common/protocol.js';
import type { ToolKind, ToolResult } from '../src/common/types.js';
import {
  checkPermissionActivity,
  describeToolCallActivity,
  describeToolCallOnQueueActivity,
  executeToolActivity,
} from './activity-options.js';
import { dispatchEvent, type DispatchState } from './dispatch.js';
import { toFailure } from './failures.js';
import { identityFields, versionRefusalOf, withRefusalRetries } from './version-refusal.js';

/** A pending `ask`, and the answer once a person gave one. */
interface PendingPermissionEntry {
  request: PendingPermission;
  answer?: PermissionAnswer;
}

/** The session state the pipeline reads and writes. */
export interface ToolPipelineState extends DispatchState {
  pendingPermissions: Map<string, PendingPermissionEntry>;
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

/** Run one tool call through the whole pipeline. Rethrows only cancellation. */
export async function runToolCall(
  state: ToolPipelineState,
  call: ToolCall,
  requestId: string,
  onExecuted: (outcome: ToolCallOutcome) => void = () => undefined,
): Promise<ToolCallOutcome> {
  const { toolName, toolUseId } = call;
  let input: JsonObject = call.input;
  const tags = { toolUseId, toolName, requestId };
  const end = (
    result: ToolResult,
    status: ToolCallRecord['status'],
    interrupt = false,
    hookError?: HookErrorRecord,
  ): ToolCallOutcome => ({
    result,
    record: {
      toolUseId,
      toolName,
      toolInput: input,
      status,
      ...(result.display ? { display: result.display } : {}),
      ...(result.outputRef ? { outputRef: result.outputRef } : {}),
      ...(hookError ? { hookError } : {}),
    },
    interrupt,
  });
  // A hook failed: the record says how; the model gets `result` (by default an error result
  // naming the hook), or, with `toolHookErrors: 'reject'`, the send rejects with the error.
  const hookFailed = (event: HookEvent, error: unknown, result?: ToolResult): ToolCallOutcome => {
    const outcome = end(
      result ?? hookErrorResult(event, error),
      'error',
      false,
      hookErrorRecord(
        event,
        detailOf(error) ?? { name: 'HookError', message: failureMessage(error) },
      ),
    );
    if (state.input.toolHookErrors !== 'reject') return outcome;
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
  };

  // 1. PreToolUse
  try {
    const merged = await dispatchEvent(
      state,
      HookEvent.PreToolUse,
      { toolName, toolInput: input, toolUseId },
      tags,
    );
    if (merged) {
      const decision = applyPreToolUse(toolName, input, merged);
      if (decision.kind !== 'run')
        return end(decision.result, decision.kind === 'skip' ? 'skipped' : 'aborted');
      input = decision.toolInput;
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    return hookFailed(HookEvent.PreToolUse, error);
  }

  // 2. What the call is: its kind and the paths it touches.
  let description = await describeCall(state, toolName, input);
  if (!description.known) {
    const message = `Unknown tool '${toolName}'`;
    return end(
      { status: 'error', model: message, error: { message, type: 'UnknownTool' } },
      'error',
    );
  }

  // 3. PermissionRequest hooks observe (and may block) the request.
  try {
    const merged = await dispatchEvent(
      state,
      HookEvent.PermissionRequest,
      {
        toolName,
        toolInput: input,
        toolKind: description.kind,
        affectedPaths: description.affectedPaths,
        toolUseId,
      },
      tags,
    );
    if (merged) {
      const decision = applyPermissionRequest(toolName, input, merged);
      input = decision.toolInput;
      if (decision.kind === 'deny')
        return end(deniedResult(toolName, decision.message), 'denied', decision.interrupt);
      // Edited input: the policy must judge the paths the call will really touch.
      if (merged.modifiedInput) {
        description = await describeCall(state, toolName, input);
      }
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    return hookFailed(HookEvent.PermissionRequest, error);
  }

  // 4. The policy decides; `ask` waits durably for a person.
  let decision: PermissionResult | PermissionAnswer = await policyDecision(
    state,
    toolUseId,
    toolName,
    input,
    description,
  );
  if (decision.behavior === 'ask') {
    decision = await askPerson(state, {
      toolUseId,
      toolName,
      input,
      kind: description.kind,
      paths: description.affectedPaths,
      message: decision.message,
    });
  }
  if (decision.behavior === 'deny') {
    const message = decision.message ?? `Permission to run ${toolName} was denied`;
    return end(deniedResult(toolName, message), 'denied', decision.interrupt === true);
  }
  if (decision.updatedInput) input = decision.updatedInput;

  // 5. Execution.
  let result: ToolResult;
  try {
    const timeoutMs = state.input.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs;
    const execInput = {
      sessionId: state.input.sessionId,
      agentName: state.input.agentName,
      ...identityFields(state.input),
      toolUseId,
      toolName,
      input,
      timeoutMs,
    };
    result = await withRefusalRetries(
      state.input,
      { task: `the execution of ${toolName}` },
      timeoutMs,
      (eager) => executeToolActivity(state.taskQueue, timeoutMs, eager)(execInput),
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    const message = `Tool ${toolName} failed to run: ${failureMessage(error)}`;
    result = { status: 'error', model: message, error: { message, type: 'ToolExecutionFailed' } };
  }

  // The tool ran: if the prompt is aborted from here on, its result still stands.
  onExecuted(end(result, result.status === 'success' ? 'success' : 'error'));

  // 6. PostToolUse or PostToolUseFailure.
  if (result.status === 'success') {
    try {
      const merged = await dispatchEvent(
        state,
        HookEvent.PostToolUse,
        { toolName, toolInput: input, toolOutput: result.model, toolUseId },
        tags,
      );
      if (merged) result = applyPostToolUse(result, merged);
    } catch (error) {
      if (isCancellation(error)) throw error;
      return hookFailed(HookEvent.PostToolUse, error);
    }
    return end(result, result.status === 'success' ? 'success' : 'error');
  }
  try {
    const error: SerializedError = { name: result.error.type, message: result.error.message };
    if (result.error.code) error.code = result.error.code;
    const merged = await dispatchEvent(
      state,
      HookEvent.PostToolUseFailure,
      {
        toolName,
        toolInput: input,
        toolOutput: result.model,
        toolUseId,
        error: error as unknown as JsonObject,
      },
      tags,
    );
    if (merged) result = applyPostToolUseFailure(result, merged);
  } catch (error) {
    if (isCancellation(error)) throw error;
    // The seed: a PostToolUseFailure hook that throws is logged (the worker logs every failed
    // dispatch), and the tool error kept.
    return hookFailed(HookEvent.PostToolUseFailure, error, result);
  }
  return end(result, 'error');
}

/**
 * Kind and affected paths of a call, from the worker that runs this workflow task (a local
 * activity); when that worker runs another version it refuses, and a worker of the session's
 * version answers through the task queue.
 * @throws ApplicationFailure `WORKER_VERSION_MISMATCH` when none does within the hook budget.
 */
async function describeCall(state: ToolPipelineState, toolName: string, input: JsonObject) {
  const describeInput = {
    agentName: state.input.agentName,
    sessionId: state.input.sessionId,
    ...identityFields(state.input),
    toolName,
    input,
  };
  try {
    return await describeToolCallActivity()(describeInput);
  } catch (error) {
    if (!versionRefusalOf(error)) throw error;
    return withRefusalRetries(
      state.input,
      { task: `the description of a ${toolName} call` },
      state.input.hookTimeoutMs,
      () => describeToolCallOnQueueActivity(state.taskQueue, false)(describeInput),
    );
  }
}

/** The result given to a call that never ran because its prompt was aborted or interrupted. */
export function cancelledResult(toolName: string, why: string): ToolResult {
  const message = `Tool ${toolName} did not run: ${why}`;
  return { status: 'error', model: message, error: { message, type: 'Cancelled' } };
}

async function policyDecision(
  state: ToolPipelineState,
  toolUseId: string,
  toolName: string,
  input: JsonObject,
  description: { kind: ToolKind; affectedPaths: string[] },
): Promise<PermissionResult> {
  const permission = state.input.permission ?? { preset: 'default' as const };
  if ('preset' in permission) return presetDecision(permission.preset, description.kind);
  const checkInput = {
    agentName: state.input.agentName,
    sessionId: state.input.sessionId,
    ...identityFields(state.input),
    toolUseId,
    toolName,
    input,
    kind: description.kind,
    affectedPaths: description.affectedPaths,
    ...('handler' in permission && permission.handler === 'session'
      ? { handler: 'session' as const }
      : {}),
  };
  // Refused everywhere (no worker of the session's version): the call is denied, naming why.
  const checked = await withRefusalRetries(
    state.input,
    { task: `the permission check of ${toolName}` },
    state.input.hookTimeoutMs,
    (eager) => checkPermissionActivity(state.taskQueue, eager)(checkInput),
  ).catch((error: unknown) => {
    if (isCancellation(error)) throw error;
    return { ok: false as const, error: { name: 'Error', message: failureMessage(error) } };
  });
  if (checked.ok) return checked.result;
  return {
    behavior: 'deny',
    message: `Permission check for ${toolName} failed: ${checked.error.message}`,
  };
}

async function askPerson(
  state: ToolPipelineState,
  ask: {
    toolUseId: string;
    toolName: string;
    input: JsonObject;
    kind: ToolKind;
    paths: string[];
    message?: string | undefined;
  },
): Promise<PermissionAnswer> {
  const timeoutMs = state.input.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs;
  const askedAt = Date.now();
  const entry: PendingPermissionEntry = {
    request: {
      requestId: uuid4(),
      toolUseId: ask.toolUseId,
      toolName: ask.toolName,
      toolKind: ask.kind,
      input: ask.input,
      affectedPaths: ask.paths,
      askedAt,
      deadline: askedAt + timeoutMs,
      ...(ask.message !== undefined ? { message: ask.message } : {}),
    },
  };
  state.pendingPermissions.set(entry.request.requestId, entry);
  try {
    const answered = await condition(() => entry.answer !== undefined, timeoutMs);
    if (!answered || !entry.answer) {
      return {
        behavior: 'deny',
        message: `No decision on ${ask.toolName} within ${timeoutMs} ms: denied`,
      };
    }
    return entry.answer;
  } finally {
    state.pendingPermissions.delete(entry.request.requestId);
  }
}

function deniedResult(toolName: string, message: string): ToolResult {
  return {
    status: 'error',
    model: message,
    display: { summary: `Permission denied: ${toolName}` },
    error: { message, type: 'PermissionDenied', code: 'PERMISSION_DENIED' },
  };
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

function failureMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}
