/**
 * A tool call on its way through the pipeline (`tool-pipeline.ts`): the state it reads, the
 * run it carries from stage to stage, and how a call ends (its result for the model, its
 * record, a hook's failure). Workflow code.
 *
 * @module
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { ToolCall } from '../../src/common/conversation.js';
import {
  hookErrorRecord,
  type HookErrorRecord,
  type SerializedError,
} from '../../src/common/errors.js';
import type { HookEvent } from '../../src/common/hook-events.js';
import type { JsonObject } from '../../src/common/json.js';
import type { ToolCallDescription } from '../../src/common/activity-io.js';
import type { ToolCallRecord } from '../../src/common/messages.js';
import type { ToolResult } from '../../src/common/types.js';
import { type McpToolList } from '../../src/common/mcp.js';
import { type McpCall } from './mcp-calls.js';
import { failureMessage, toFailure } from '../session/failures.js';
import { type PendingPermissionEntry } from './tool-permission.js';
import { type TaskCallState } from './task-call.js';

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
export interface CallRun {
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

/** Whether the agent has callbacks for `event` (a dispatch of it would do nothing). */
export function hasCallbacks(state: ToolPipelineState, event: HookEvent): boolean {
  return (state.input.hookCounts[event] ?? 0) > 0;
}

/** How the call ended: its result for the model and its record (`reason`: why it did not run). */
export function end(
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
export function hookFailed(
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
