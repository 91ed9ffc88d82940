/**
 * The timeline's handlers of child workflow events: a `Task` call (`advanced.subagents`)
 * starts its sub-agent as a child workflow of the session, in place of an `executeTool`
 * activity. The start names the call (the child's input carries its `lineage`), and the
 * child's close is the call's run: what it answered, or how it failed. The sub-agent's own
 * hooks and tool calls are in its own history.
 *
 * @module
 */
import type { JsonObject } from '../common/json.js';
import type { ToolResult } from '../common/types.js';
import type { SessionWorkflowInput, SessionWorkflowResult } from '../common/workflow-io.js';
import { decodePayload, numberOf, type HistoryEvent } from './decode.js';
import { budgetChildClosed, budgetChildStarted } from './timeline-budget.js';
import { decode, timeOf, timeOfEventId, type TimelineBuild } from './timeline-build.js';
import type { HistoryPrompt, HistoryWorkflowStatus } from './timeline-types.js';
import type { HistoryChildSession, ToolExecuteOutcome } from './tool-calls.js';

type Attributes<K extends keyof HistoryEvent> = NonNullable<HistoryEvent[K]>;

/**
 * A sub-agent was started: the `Task` call named by its lineage runs, with the input the
 * sub-agent was given (its prompt and name; the description as the start's summary says it).
 */
export function childInitiated(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'startChildWorkflowExecutionInitiatedEventAttributes'>,
): void {
  const input = decode<Partial<SessionWorkflowInput>>(build, attributes.input);
  const lineage = input?.lineage;
  if (!lineage || typeof input.sessionId !== 'string') return;
  const summary = decodePayload<string>(event.userMetadata?.summary ?? undefined, build.converter);
  const prefix = `${lineage.agentPath}: `;
  const description =
    typeof summary === 'string' && summary.startsWith(prefix) ? summary.slice(prefix.length) : '';
  const child: HistoryChildSession = {
    sessionId: input.sessionId,
    workflowId: attributes.workflowId ?? '',
    agentPath: lineage.agentPath,
    subagent: lineage.subagent,
    status: 'running',
  };
  const ran: JsonObject = {
    description,
    prompt: input.task?.prompt ?? '',
    subagent_type: lineage.subagent,
  };
  const state = build.tools.childScheduled(lineage.toolUseId, ran, child);
  build.children.set(numberOf(event.eventId), state);
  budgetChildStarted(build, numberOf(event.eventId), input);
}

/** Temporal refused to start the sub-agent (its workflow id was used before). */
export function childStartFailed(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'startChildWorkflowExecutionFailedEventAttributes'>,
): void {
  const message = `sub-agent session ${attributes.workflowId ?? ''} was started before; not started again`;
  budgetChildClosed(build, numberOf(attributes.initiatedEventId), undefined, false);
  closeChild(build, event, attributes.initiatedEventId, 'not_started', {
    kind: 'completed',
    offloaded: false,
    result: {
      status: 'error',
      model: message,
      error: { type: 'SubagentAlreadyStarted', message, code: 'SUBAGENT_ALREADY_STARTED' },
    },
  });
}

/** The sub-agent's workflow completed: its outcome is the call's result. */
export function childCompleted(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'childWorkflowExecutionCompletedEventAttributes'>,
): void {
  const ended = decode<SessionWorkflowResult>(build, attributes.result);
  const task = ended?.task;
  budgetChildClosed(build, numberOf(attributes.initiatedEventId), task?.spent, true);
  const failure = ended?.startError ?? task?.error;
  const agentPath = build.children.get(numberOf(attributes.initiatedEventId))?.call.child
    ?.agentPath;
  const done = !failure && (task?.status === 'completed' || task?.status === 'max_turns');
  const message = done
    ? (task?.text ?? '')
    : `Task failed: sub-agent ${agentPath ?? ''}: ${failure?.message ?? `it ended ${task?.status ?? 'without an outcome'}`}`;
  const result: ToolResult = done
    ? { status: 'success', model: message }
    : {
        status: 'error',
        model: message,
        error: {
          type: failure?.name ?? 'SubagentError',
          message,
          ...(failure?.code ? { code: failure.code } : {}),
        },
      };
  closeChild(
    build,
    event,
    attributes.initiatedEventId,
    'completed',
    { kind: 'completed', offloaded: false, result },
    task?.toolCalls,
  );
}

/** The sub-agent's workflow failed. */
export function childFailed(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'childWorkflowExecutionFailedEventAttributes'>,
): void {
  const message = attributes.failure?.message ?? 'the sub-agent failed';
  closeChild(build, event, attributes.initiatedEventId, 'failed', { kind: 'failed', message });
}

/** The sub-agent's workflow was cancelled (an abort, a close, its Task timeout). */
export function childCanceled(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'childWorkflowExecutionCanceledEventAttributes'>,
): void {
  closeChild(build, event, attributes.initiatedEventId, 'cancelled', { kind: 'cancelled' });
}

/** The sub-agent's workflow was terminated. */
export function childTerminated(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'childWorkflowExecutionTerminatedEventAttributes'>,
): void {
  const message = 'the sub-agent session was terminated';
  closeChild(build, event, attributes.initiatedEventId, 'terminated', { kind: 'failed', message });
}

/** The sub-agent's workflow timed out (its run timeout: none is set by the SDK). */
export function childTimedOut(
  build: TimelineBuild,
  event: HistoryEvent,
  attributes: Attributes<'childWorkflowExecutionTimedOutEventAttributes'>,
): void {
  const message = 'the sub-agent session timed out';
  closeChild(build, event, attributes.initiatedEventId, 'timed_out', { kind: 'failed', message });
}

function closeChild(
  build: TimelineBuild,
  event: HistoryEvent,
  initiatedEventId: unknown,
  status: HistoryChildSession['status'],
  outcome: ToolExecuteOutcome,
  toolCalls?: number,
): void {
  const initiated = numberOf(initiatedEventId);
  // Ended without saying what it spent: charged its whole allotment (settled already otherwise).
  budgetChildClosed(build, initiated, undefined, true);
  const state = build.children.get(initiated);
  if (!state) return;
  const started = timeOfEventId(build, initiated);
  const closed = timeOf(event);
  const durationMs =
    started !== undefined && closed !== undefined ? Math.max(0, closed - started) : undefined;
  build.tools.executeClosed(state, outcome, durationMs);
  const child = state.call.child;
  if (child) {
    child.status = status;
    if (typeof toolCalls === 'number') child.toolCalls = toolCalls;
  }
}

/**
 * A sub-agent's history (its input has `lineage` and `task`) has no `send` Update: its one
 * prompt is the `Task` call's, run from the start. It opens here, so the prompt's dispatches
 * and tool calls belong to it as a send's do.
 */
export function subagentPromptStarted(build: TimelineBuild): void {
  const task = build.input?.lineage ? build.input.task : undefined;
  if (!task) return;
  const prompt: HistoryPrompt = {
    requestId: task.requestId,
    prompt: task.prompt,
    acceptedAt: build.timeline.startedAt ?? 0,
    dispatches: [],
    toolCalls: [],
  };
  build.timeline.prompts.push(prompt);
  build.promptInputs.set(prompt, { userPrompt: task.prompt, hasImages: false, imageCount: 0 });
  build.openPrompts.push(prompt);
}

/**
 * A sub-agent's workflow closed: its prompt ended as its result says (`aborted` when it was
 * cancelled or failed without one), with every tool call of the history.
 */
export function subagentPromptClosed(
  build: TimelineBuild,
  status: HistoryWorkflowStatus,
  result: Partial<SessionWorkflowResult> | undefined,
  at: number | undefined,
): void {
  const task = build.input?.lineage ? build.input.task : undefined;
  const prompt = task && build.openPrompts.find((p) => p.requestId === task.requestId);
  if (!prompt) return;
  if (at !== undefined) prompt.completedAt = at;
  const outcome = result?.task;
  if (status === 'COMPLETED' && outcome) {
    prompt.status = outcome.error ? 'failed' : outcome.status;
    prompt.text = outcome.error?.message ?? outcome.text;
  } else {
    prompt.status = status === 'CONTINUED_AS_NEW' ? 'completed' : 'aborted';
  }
  build.promptCalls.set(
    prompt.requestId,
    build.tools.calls.map((call) => call.toolUseId),
  );
  build.openPrompts.splice(build.openPrompts.indexOf(prompt), 1);
}
