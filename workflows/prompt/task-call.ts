/**
 * A `Task` call's execution: instead of `executeTool`, the session starts a sub-agent, a
 * child `sessionWorkflow` that runs the call's `prompt` once and returns its final text.
 * The call goes through the whole tool pipeline around this (PreToolUse, permission,
 * PostToolUse), so every hook and policy of the parent judges it. Only sessions whose input
 * has `subagents` ever get here: every other session, and every history recorded before
 * sub-agents existed, runs a tool named `Task` as any other tool. Workflow code.
 *
 * @module
 */
import {
  CancellationScope,
  type ChildWorkflowOptions,
  ParentClosePolicy,
  ChildWorkflowCancellationType,
  isCancellation,
  setCurrentDetails,
  sleep,
  startChild,
} from '@temporalio/workflow';
import type { ToolCall } from '../../src/common/conversation.js';
import type { McpToolList } from '../../src/common/mcp.js';
import { childMcpTools } from './mcp-calls.js';
import type { SerializedError } from '../../src/common/errors.js';
import type { JsonObject } from '../../src/common/json.js';
import type { ToolCallDescription } from '../../src/common/activity-io.js';
import type { AbortRecord, ChildRunInfo } from '../../src/common/messages.js';
import type { WorkflowStreamEvent } from '../../src/common/permission-events.js';
import {
  ROOT_AGENT_PATH,
  TASK_TOOL,
  childInputOf,
  childLineageOf,
  childSessionIdOf,
  taskCallRefusal,
  taskTimeoutMessage,
} from '../../src/common/subagents.js';
import type { ToolResult } from '../../src/common/types.js';
import {
  SESSION_WORKFLOW,
  sessionWorkflowId,
  type SessionWorkflow,
  type SessionWorkflowInput,
  type SessionWorkflowResult,
  type SubagentSpec,
} from '../../src/common/workflow-io.js';
import { failureToSerialized } from '../session/failures.js';
import { childSearchAttributes } from '../session/search-attributes.js';
import { queueStreamEvent, takeStreamEvents } from '../session/stream-outbox.js';
import type { DispatchState } from './dispatch.js';
import { allotTaskBudget, settleTaskBudget, type TaskBudgetState } from './task-budget.js';
import { awaitTurn, passTurn, type TaskGroup } from './task-group.js';

/** A sub-agent a `Task` call of this run started (what the `children` query lists, and more). */
interface ChildRun extends ChildRunInfo {
  /** Why the session cancelled it on its own (the Task timeout); its hooks are told this. */
  cancelRecord?: AbortRecord;
}

/** The session state a `Task` call reads and writes. */
export interface TaskCallState extends DispatchState, TaskBudgetState {
  /** This run's sub-agents, by the `Task` call's tool-use id; finished ones are kept a while. */
  children?: Map<string, ChildRun>;
  /** Whether the session keeps its search attributes (its sub-agents start with them). */
  searchAttributes?: boolean;
  /** Whether it keeps the spend attributes too (its sub-agents start with theirs at 0). */
  spendAttributes?: boolean;
  /** The parallel group of `Task` calls running now, if any (`tool-calls.ts`). */
  taskGroup?: TaskGroup;
  /** The MCP tools the session started with; its sub-agents get the same list. */
  mcpTools?: McpToolList;
}

/** Finished sub-agents a run keeps in {@link TaskCallState.children}. */
const FINISHED_KEPT = 100;

/** What a `Task` call is, answered here rather than by the worker: it touches no path. */
const TASK_DESCRIPTION: ToolCallDescription = { known: true, kind: 'readonly', affectedPaths: [] };

/** Whether `call` starts a sub-agent: a `Task` call in a session that has sub-agents. */
export function isTaskCall(state: Pick<TaskCallState, 'input'>, call: ToolCall): boolean {
  return state.input.subagents !== undefined && call.toolName === TASK_TOOL;
}

/** A `Task` call's description (kind `readonly`, no paths), without a local activity. */
export function describeTask(): Promise<ToolCallDescription> {
  return Promise.resolve(taskDescription());
}

/** What a `Task` call is: read-only (its sub-agent's own calls ask for themselves), no paths. */
export function taskDescription(): ToolCallDescription {
  return { ...TASK_DESCRIPTION, affectedPaths: [] };
}

/**
 * Run the `Task` call `call` with `input` (as PreToolUse and permission left it): refuse it
 * (a tool error naming the limit or the known sub-agents), or start its sub-agent and wait
 * for it, at most its `timeoutMs` from its start (then cancel it and wait for its
 * SessionEnd). Rethrows only cancellation (an abort of the prompt cancels the sub-agent too).
 */
export async function runTaskCall(
  state: TaskCallState,
  call: ToolCall,
  input: JsonObject,
  requestId: string,
): Promise<ToolResult> {
  const children = (state.children ??= new Map());
  // In a parallel group, the limits are checked in call order (`task-group.ts`).
  const group = state.taskGroup;
  const running = group ? await awaitTurn(group, call) : runningChildren(state);
  const refusal = taskCallRefusal(state.input, input, running);
  if (group) passTurn(group, call, refusal === undefined);
  if (refusal) {
    queueRefusedEvents(state, requestId, call, input, refusal.message);
    return taskError(refusal.message, 'SubagentRefused', refusal.code);
  }
  const { spec, child, args } = childOfCall(state, call, input, requestId);
  const { workflowId, sessionId } = child;
  // With a budget, the sub-agent runs under its share of what the session has left.
  const budget = allotTaskBudget(state, call.toolUseId, spec, group);
  if (budget) args.budget = budget;
  setCurrentDetails(`running sub-agent ${child.agentPath}`);
  // The sub-agent's first activity publishes what the send has queued and this call's
  // tool-start, before any event of its own: no local activity here.
  const streamStart = handOverStream(state, requestId, call, input, sessionId);
  args.task = { ...args.task!, streamStart };
  let started = false;
  const ended = (result: ToolResult, status?: 'cancelled'): ToolResult => {
    queueToolEnd(state, requestId, call, child, result, status);
    return result;
  };
  // Started and awaited in a scope of its own: the Task timeout cancels this scope only (the
  // prompt goes on); an abort of the prompt cancels it with the prompt.
  const scope = new CancellationScope();
  let timedOut = false;
  try {
    const result = await scope.run(async () => {
      const options = startOptionsOf(state, child, args, String(input.description));
      const handle = await startChild<SessionWorkflow>(SESSION_WORKFLOW, options);
      started = true;
      children.set(call.toolUseId, child);
      const summary = `Task timeout: ${child.agentPath}`;
      return withBudget(handle.result(), spec.timeoutMs, summary, () => {
        timedOut = true;
        // Recorded before the cancel: the child's hooks ask for it (`subagentAbortReason`).
        child.cancelRecord = timeoutRecordOf(child, spec.timeoutMs);
        scope.cancel();
      });
    });
    child.status = 'completed';
    settleTaskBudget(state, call.toolUseId, result.task?.spent, true);
    return ended(resultOf(child, result, spec.maxTurns));
  } catch (error) {
    // Its spend unknown: charged its whole allotment, unless Temporal refused its start (a
    // start cancelled before it was acknowledged may still have run: charged, as the recount).
    const refused = (error as Error | undefined)?.name === 'WorkflowExecutionAlreadyStartedError';
    settleTaskBudget(state, call.toolUseId, undefined, !refused);
    // No sub-agent took the events: the send's next activity publishes them.
    if (!started) takeBackStream(state, requestId, streamStart);
    if (timedOut && isCancellation(error)) {
      child.status = 'timed_out';
      const message = taskTimeoutMessage(child.agentPath, spec.timeoutMs);
      return ended(taskError(message, 'SubagentTimeout', 'SUBAGENT_TIMEOUT'));
    }
    if (isCancellation(error)) {
      child.status = 'cancelled';
      ended(taskError(`sub-agent ${child.agentPath} was cancelled`, 'Cancelled'), 'cancelled');
      throw error;
    }
    child.status = 'failed';
    if ((error as Error | undefined)?.name === 'WorkflowExecutionAlreadyStartedError') {
      const message = `Task failed: sub-agent session ${workflowId} was started before; not started again`;
      return ended(taskError(message, 'SubagentAlreadyStarted', 'SUBAGENT_ALREADY_STARTED'));
    }
    const failure = failureToSerialized((error as { cause?: unknown }).cause ?? error);
    return ended(failedResult(child.agentPath, failure));
  } finally {
    forgetFinished(children);
  }
}

/**
 * The send's queued stream events and the `tool-start` of this `Task` call, taken out of the
 * send's queue and marked with this session's path (`main` at the top): the sub-agent it
 * starts publishes them first (`SubagentTask.streamStart`), so they are on the stream before
 * any event of the sub-agent's, and the send's order holds.
 */
function handOverStream(
  state: TaskCallState,
  requestId: string,
  call: ToolCall,
  input: JsonObject,
  childSessionId: string,
): WorkflowStreamEvent[] {
  const { toolUseId, toolName } = call;
  queueStreamEvent(state, requestId, {
    type: 'tool-start',
    toolUseId,
    toolName,
    input,
    childSessionId,
  });
  const events = takeStreamEvents(state, requestId).streamEvents ?? [];
  const agentPath = state.input.lineage?.agentPath ?? ROOT_AGENT_PATH;
  return events.map((event) => ({ ...event, agentPath }));
}

/** Put `events` back at the head of the send's queue: no sub-agent started to publish them. */
function takeBackStream(
  state: TaskCallState,
  requestId: string,
  events: readonly WorkflowStreamEvent[],
): void {
  const later = takeStreamEvents(state, requestId).streamEvents ?? [];
  for (const event of [...events, ...later]) queueStreamEvent(state, requestId, event);
}

/**
 * Queue the `tool-end` of a `Task` call (`cancelled` when `status` says so, else as the result
 * says), with the sub-agent it started; the send's next activity publishes it.
 */
function queueToolEnd(
  state: TaskCallState,
  requestId: string,
  call: ToolCall,
  child: ChildRun,
  result: ToolResult,
  status?: 'cancelled',
): void {
  const summary =
    result.display?.summary ?? (result.status === 'error' ? result.error.message : undefined);
  queueStreamEvent(state, requestId, {
    type: 'tool-end',
    toolUseId: call.toolUseId,
    toolName: call.toolName,
    status: status ?? result.status,
    ...(summary !== undefined ? { summary } : {}),
    durationMs: Date.now() - child.startedAt,
    childSessionId: child.sessionId,
  });
}

/** Queue the `tool-start` and `tool-end` of a `Task` call refused before any sub-agent started. */
function queueRefusedEvents(
  state: TaskCallState,
  requestId: string,
  call: ToolCall,
  input: JsonObject,
  summary: string,
): void {
  const { toolUseId, toolName } = call;
  queueStreamEvent(state, requestId, { type: 'tool-start', toolUseId, toolName, input });
  queueStreamEvent(state, requestId, {
    type: 'tool-end',
    toolUseId,
    toolName,
    status: 'error',
    summary,
    durationMs: 0,
  });
}

/** How the sub-agent's workflow is started: `args` its input, `description` the Task's. */
function startOptionsOf(
  state: TaskCallState,
  child: ChildRun,
  args: SessionWorkflowInput,
  description: string,
): ChildWorkflowOptions & { args: [SessionWorkflowInput] } {
  const searchAttributes = childSearchAttributes(state);
  return {
    workflowId: child.workflowId,
    args: [args],
    taskQueue: state.taskQueue,
    // Cancelling the scope waits for the sub-agent's SessionEnd; a parent that closes,
    // fails or is terminated has its sub-agents cancelled (so they run SessionEnd), not
    // terminated (they would not).
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    memo: memoOf(state, child),
    staticSummary: `${child.agentPath}: ${description}`,
    // Found by the queries that find the parent's session (agent name, version, ...).
    ...(searchAttributes ? { typedSearchAttributes: searchAttributes } : {}),
  };
}

/** The sub-agent a `Task` call starts: its spec, its run record, and its workflow's input. */
function childOfCall(
  state: TaskCallState,
  call: ToolCall,
  input: JsonObject,
  requestId: string,
): { spec: SubagentSpec; child: ChildRun; args: SessionWorkflowInput } {
  const name = input.subagent_type as string;
  const spec = state.input.subagents!.agents.find((agent) => agent.name === name)!;
  const sessionId = childSessionIdOf(state.input.sessionId, state.modelSteps - 1, call.toolUseId);
  const lineage = childLineageOf(state.input, name, call.toolUseId, {
    sessionId: state.input.sessionId,
    requestId,
  });
  const workflowId = sessionWorkflowId(sessionId);
  const args = {
    ...childInputOf({ ...state.input, taskQueue: state.taskQueue }, spec, {
      sessionId,
      lineage,
      task: { requestId: `task-${call.toolUseId}`, prompt: input.prompt as string },
    }),
    ...childMcpTools(state, spec),
  };
  const child: ChildRun = {
    toolUseId: call.toolUseId,
    sessionId,
    workflowId,
    agentPath: lineage.agentPath,
    subagent: name,
    startedAt: Date.now(),
    status: 'running',
  };
  return { spec, child, args };
}

/** How many sub-agents of the session are running. */
export function runningChildren(state: Pick<TaskCallState, 'children'>): number {
  let running = 0;
  for (const child of state.children?.values() ?? []) if (child.status === 'running') running++;
  return running;
}

/**
 * Why the session cancelled the sub-agent with workflow id `childWorkflowId`: its Task
 * timeout, else the running prompt's abort (which cancels every sub-agent it started); null
 * when neither is known. What the `subagentAbortReason` query answers.
 */
export function subagentAbortRecord(
  state: Pick<TaskCallState, 'children'> & { current?: { abort?: AbortRecord } },
  childWorkflowId: string,
): AbortRecord | null {
  for (const child of state.children?.values() ?? []) {
    if (child.workflowId === childWorkflowId && child.cancelRecord) return child.cancelRecord;
  }
  return state.current?.abort ?? null;
}

/** Why a sub-agent past its Task timeout is cancelled: what its hooks' signals carry. */
function timeoutRecordOf(child: ChildRun, timeoutMs: number): AbortRecord {
  const message = taskTimeoutMessage(child.agentPath, timeoutMs);
  const reason = { name: 'SubagentTimeout', code: 'SUBAGENT_TIMEOUT', message };
  return { abortId: `timeout:${child.workflowId}`, reason };
}

/** The sub-agent's memo: who it is, for `sessions` and Temporal's UI. */
function memoOf(state: TaskCallState, child: ChildRun): Record<string, unknown> {
  return {
    sessionId: child.sessionId,
    agentName: state.input.agentName,
    ...(state.input.version !== undefined ? { version: state.input.version } : {}),
    parentSessionId: state.input.sessionId,
    agentPath: child.agentPath,
  };
}

/** `result`, with `onTimeout` called once `timeoutMs` passed first (the timer is cancelled after). */
async function withBudget<T>(
  result: Promise<T>,
  timeoutMs: number,
  summary: string,
  onTimeout: () => void,
) {
  const budget = new CancellationScope();
  void budget.run(() => sleep(timeoutMs, { summary })).then(onTimeout, () => undefined);
  try {
    return await result;
  } finally {
    budget.cancel();
  }
}

/** The `Task` call's result from its sub-agent's: its final text, or why it did not finish. */
function resultOf(child: ChildRun, result: SessionWorkflowResult, maxTurns: number): ToolResult {
  const task = result.task;
  const failure: SerializedError | undefined =
    result.startError ??
    task?.error ??
    (task ? undefined : { name: 'SubagentError', message: 'it returned no outcome' });
  if (failure || !task) return failedResult(child.agentPath, failure!);
  const summary = `${child.agentPath}: ${task.status}, ${task.toolCalls} tool call(s)`;
  const metadata = { subagent: { sessionId: child.sessionId, agentPath: child.agentPath } };
  switch (task.status) {
    case 'completed':
      return { status: 'success', model: task.text, display: { summary }, metadata };
    case 'max_turns':
      return {
        status: 'success',
        model: `${task.text}\n[sub-agent stopped at maxTurns ${maxTurns}]`,
        display: { summary },
        metadata,
      };
    case 'interrupted':
      return taskError(
        `Task interrupted: a permission denial stopped sub-agent ${child.agentPath}` +
          (task.text ? `; its last text: ${task.text}` : ''),
        'SubagentInterrupted',
        'SUBAGENT_INTERRUPTED',
      );
    case 'aborted':
      return taskError(
        `Task failed: sub-agent ${child.agentPath} was aborted`,
        'SubagentAborted',
        'SUBAGENT_ABORTED',
      );
    case 'budget_exceeded':
      return taskError(
        `Task failed: sub-agent ${child.agentPath} stopped at its budget` +
          (task.text ? `; its last text: ${task.text}` : ''),
        'BudgetExceeded',
        'BUDGET_EXCEEDED',
      );
  }
}

/** The tool error of a sub-agent that failed: its error's code and message. */
function failedResult(agentPath: string, failure: SerializedError): ToolResult {
  return taskError(
    `Task failed: sub-agent ${agentPath}: ${failure.message}`,
    failure.name,
    failure.code,
  );
}

function taskError(message: string, type: string, code?: string): ToolResult {
  return { status: 'error', model: message, error: { message, type, ...(code ? { code } : {}) } };
}

/** Drop the oldest finished sub-agents beyond {@link FINISHED_KEPT}. */
function forgetFinished(children: Map<string, ChildRun>): void {
  let finished = [...children.values()].filter((child) => child.status !== 'running').length;
  for (const [toolUseId, child] of children) {
    if (finished <= FINISHED_KEPT) break;
    if (child.status === 'running') continue;
    children.delete(toolUseId);
    finished--;
  }
}
