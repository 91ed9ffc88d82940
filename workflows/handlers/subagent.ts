/**
 * A sub-agent's session (its input has `lineage`): SessionStart, its one prompt (the parent's
 * `Task` call's) through the same `runPrompt` as any send, then SessionEnd, exactly once
 * however it ends (done, failed, aborted, or cancelled by its parent), and a compact result:
 * its timeline stays in its own history. It takes no `send`, `close`, `handoff` or `upgrade`:
 * those act on the parent. `abort`, `decidePermission` and the queries work as in any
 * session. Workflow code.
 *
 * @module
 */
import { holdsLeases, returnLeases } from '../prompt/shared-budget.js';
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  setCurrentDetails,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { Updates, type SendRequest, type UpgradeRequest } from '../../src/common/messages.js';
import type { SessionWorkflowResult, SubagentTask } from '../../src/common/workflow-io.js';
import { runPrompt } from '../prompt/run.js';
import { failureToSerialized, toFailure } from '../session/failures.js';
import { syncSearchAttributes, watchSearchAttributes } from '../session/search-attributes.js';
import type { PromptRun, SessionState } from '../session/state.js';
import {
  closeStreamOutbox,
  hasQueuedStreamEvents,
  queueStreamEvent,
} from '../session/stream-outbox.js';
import { sessionSetHandler } from '../session/update-count.js';
import { setAbortHandler } from './abort.js';
import { setApprovalHandler } from './approval.js';
import { endWithoutCaller } from './close.js';
import { setSessionQueries } from './queries.js';
import { runSessionStart, setReadyHandler } from './start.js';

/** How the one prompt ended: what the parent's `Task` call gets. */
type TaskOutcome = NonNullable<SessionWorkflowResult['task']>;

/** Run a sub-agent's session to its end. Rethrows the cancellation that ended it. */
export async function runSubagentSession(state: SessionState): Promise<SessionWorkflowResult> {
  const { input } = state;
  setSubagentHandlers(state);
  watchSearchAttributes(state);
  // Registered before the prompt's scope exists, so this runs before the prompt's work is
  // cancelled: the prompt's hooks are told why (`abortReason`), and where the real reason
  // is (`askParent`: the parent's abort or the Task timeout, `subagentAbortReason`).
  const parentWorkflowId = workflowInfo().parent?.workflowId;
  void CancellationScope.current().cancelRequested.catch(() => {
    if (state.current && !state.current.abort) {
      state.current.abort = {
        abortId: `parent:${uuid4()}`,
        reason: { name: 'CancelledFailure', message: 'cancelled by its parent session' },
        ...(parentWorkflowId !== undefined ? { askParent: parentWorkflowId } : {}),
      };
    }
  });
  // The parent's events up to the Task call's tool-start go out first, with this session's
  // first activity (SessionStart's dispatch takes the task's queue: `dispatch.ts`).
  const task = input.task;
  for (const event of task?.streamStart ?? []) queueStreamEvent(state, task!.requestId, event);
  let outcome: TaskOutcome;
  try {
    await runSessionStart(state);
    if (state.startError) {
      // As a session whose SessionStart failed: it never opened, so no SessionEnd.
      state.status = 'closed';
      if (state.pendingCleanups.size > 0) await condition(() => state.pendingCleanups.size === 0);
      outcome = { ...emptyOutcome(state), error: state.startError };
    } else {
      state.status = 'open';
      outcome = await runTask(state, task ?? missingTask(input.sessionId));
      await endWithoutCaller(state, 'other');
      // What it holds of the shared budgets (it leases its own) goes back.
      if (holdsLeases(state)) await returnLeases(state, 'all');
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled by its parent (an abort, a close, the Task timeout) or from outside.
    await CancellationScope.nonCancellable(async () => {
      await endWithoutCaller(state, 'cancelled');
      if (holdsLeases(state)) await returnLeases(state, 'all');
      // Cancelled before an activity took them: the parent's events still reach the stream.
      if (task && hasQueuedStreamEvents(state, task.requestId)) {
        await closeStreamOutbox(state, task.requestId);
      }
      await condition(allHandlersFinished);
    });
    syncSearchAttributes(state);
    throw error;
  }
  await condition(allHandlersFinished);
  syncSearchAttributes(state);
  setCurrentDetails(`closed (${state.endReason ?? 'other'})`);
  return {
    sessionId: input.sessionId,
    ...(state.startError ? { startError: state.startError } : { endReason: state.endReason }),
    promptsHandled: state.promptsHandled,
    timeline: [],
    task: outcome,
  };
}

/**
 * Run the task's prompt as `send` runs one (`state.current` set, so `abort` works), and say
 * how it ended. A failed prompt is an outcome with its error. Rethrows cancellation, but
 * that of an `abort` of this prompt alone (then the outcome is `aborted`).
 */
async function runTask(state: SessionState, task: SubagentTask): Promise<TaskOutcome> {
  const scope = new CancellationScope();
  const current: PromptRun = { scope, requestId: task.requestId, settled: false, toolCalls: [] };
  state.current = current;
  const done = (outcome: Omit<TaskOutcome, 'toolCalls' | 'timelineEntries'>): TaskOutcome => {
    current.finalStatus = outcome.status;
    const counts = { toolCalls: current.toolCalls.length, timelineEntries: state.timeline.length };
    return { ...outcome, ...counts, ...spentOf(state) };
  };
  try {
    const request = { requestId: task.requestId, prompt: task.prompt };
    const result = await scope.run(() => runPrompt(state, request, 0, current.toolCalls));
    return done({ status: result.status, text: result.text });
  } catch (error) {
    if (!isCancellation(error)) {
      return done({ status: 'aborted', text: '', error: failureToSerialized(error) });
    }
    // This prompt alone was aborted (the `abort` Update), not the session cancelled.
    if (current.abort && !CancellationScope.current().consideredCancelled) {
      return done({ status: 'aborted', text: '', error: current.abort.reason });
    }
    throw error;
  } finally {
    if (hasQueuedStreamEvents(state, task.requestId)) {
      await closeStreamOutbox(state, task.requestId);
    }
    current.settled = true;
    state.current = undefined;
    state.promptsHandled++;
    state.promptsThisRun++;
  }
}

/** An outcome with nothing done yet. */
function emptyOutcome(state: SessionState): TaskOutcome {
  const empty = { status: 'aborted' as const, text: '', toolCalls: 0 };
  return { ...empty, timelineEntries: state.timeline.length, ...spentOf(state) };
}

/** What a sub-agent under a budget spent, for its parent to settle; nothing without one. */
function spentOf(state: SessionState): Pick<TaskOutcome, 'spent'> {
  return state.budget ? { spent: { ...state.budget.spent } } : {};
}

function missingTask(sessionId: string): never {
  throw toFailure({
    name: 'AgentSdkError',
    code: 'SUBAGENT_SESSION',
    message: `Sub-agent session '${sessionId}' was started without a task`,
  });
}

/**
 * The handlers of a sub-agent's session: `ready`, `abort`, `decidePermission` and the
 * queries as in any session; `send`, `close`, `handoff` and `upgrade` refused by their
 * validators (nothing recorded), naming the parent to act on.
 */
function setSubagentHandlers(state: SessionState): void {
  setReadyHandler(state);
  setAbortHandler(state);
  setApprovalHandler(state);
  setSessionQueries(state);
  const setHandler = sessionSetHandler(state);
  const refused = (update: string): never => {
    const parent = state.input.lineage?.parentSessionId ?? 'its parent';
    throw toFailure({
      name: 'AgentSdkError',
      code: 'SUBAGENT_SESSION',
      message:
        `Session '${state.input.sessionId}' is a sub-agent: ${update} acts on its parent ` +
        `session '${parent}'`,
    });
  };
  // The handlers never run: their validators refuse every call before it is accepted.
  setHandler(Updates.send, (_: SendRequest) => refused('send'), {
    validator: (_: SendRequest) => refused('send'),
  });
  setHandler(Updates.close, () => refused('close'), { validator: () => refused('close') });
  setHandler(Updates.handoff, (_: { taskQueue: string }) => refused('handoff'), {
    validator: (_: { taskQueue: string }) => refused('handoff'),
  });
  setHandler(Updates.upgrade, (_: UpgradeRequest) => refused('upgrade'), {
    validator: (_: UpgradeRequest) => refused('upgrade'),
  });
}
