/**
 * The tool calls of one model step: each through the tool pipeline, in call order, every call
 * with exactly one result.
 *
 * @module
 */
import type { ApplicationFailure } from '@temporalio/workflow';
import type {
  ConversationMessage,
  ToolCall,
  ToolResultMessagePart,
} from '../../src/common/conversation.js';
import type { ToolCallRecord } from '../../src/common/messages.js';
import type { ToolResult } from '../../src/common/types.js';
import {
  cancelledResult,
  runToolCall,
  type ToolCallOutcome,
  type ToolPipelineState,
} from './tool-pipeline.js';

/** The session state the calls of a step read and write. */
export interface ToolCallsState extends ToolPipelineState {
  /** Append a message to the transcript and the model's context. */
  addMessage(message: ConversationMessage): void;
}

/**
 * Run the calls of one model step in order. Every call gets exactly one result, in call
 * order, also when the prompt is aborted or interrupted, so the next request is well formed.
 * @returns whether a denial interrupted the prompt.
 * @throws the hook's failure when a tool hook failed and `toolHookErrors` is `'reject'`
 *   (after every call got its result: the calls after it did not run).
 */
export async function runToolCalls(
  state: ToolCallsState,
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
