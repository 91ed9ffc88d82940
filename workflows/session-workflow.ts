/**
 * A session as one workflow execution. Prompts, abort, close and handoff arrive as Updates
 * (an update id dedupes a retried client call); SessionStart runs once when the workflow
 * starts; a marker recorded before SessionEnd is scheduled makes it run at most once, on
 * every path that ends the session.
 *
 * The handlers live in `handlers/`, one file a group: `start.ts` (ready, SessionStart),
 * `send.ts`, `abort.ts`, `handoff.ts`, `close.ts` (close and the ends no caller waits on),
 * `approval.ts`, `upgrade.ts`, `queries.ts`, `subagent.ts` (a sub-agent's whole run); a
 * prompt's run in `prompt/`; the run's state and continue-as-new (`rollover.ts`) in `session/`.
 *
 * @module
 */
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  setCurrentDetails,
  uuid4,
} from '@temporalio/workflow';
import type { SessionDescription } from '../src/common/messages.js';
import type { SessionWorkflowInput, SessionWorkflowResult } from '../src/common/workflow-io.js';
import { setAbortHandler } from './handlers/abort.js';
import { setApprovalHandler } from './handlers/approval.js';
import { endWithoutCaller, setCloseHandler } from './handlers/close.js';
import { watchCleanup } from './prompt/dispatch-outcome.js';
import { runningChildren } from './prompt/task-call.js';
import { setHandoffHandler } from './handlers/handoff.js';
import { rollover, rolloverDue } from './session/rollover.js';
import { setSendHandler } from './handlers/send.js';
import { runSubagentSession } from './handlers/subagent.js';
import { setUpgradeHandler } from './handlers/upgrade.js';
import { setBudgetHandler } from './handlers/budget.js';
import { holdsLeases, returnLeases } from './prompt/shared-budget.js';
import { setSessionQueries } from './handlers/queries.js';
import { endFailedStart, runSessionStart, setReadyHandler } from './handlers/start.js';
import { createSessionState, type SessionState } from './session/state.js';
import { listSessionMcpTools } from './session/mcp-tools.js';
import { syncSearchAttributes, watchSearchAttributes } from './session/search-attributes.js';
import { contextStamper, forgetContext } from './session/context-sync.js';
import { DEFAULTS } from '../src/common/defaults.js';

/** The session workflow. */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<SessionWorkflowResult> {
  try {
    return await runSession(input);
  } finally {
    // However the run ends, this worker's copy of its context is of no further use.
    forgetContext();
  }
}

async function runSession(input: SessionWorkflowInput): Promise<SessionWorkflowResult> {
  const carry = input.carry;
  const state = createSessionState(input);
  state.contextStamp = contextStamper(state, input.maxContextTokens ?? DEFAULTS.maxContextTokens);
  // A sub-agent, started by a `Task` call: its one task, then it ends.
  if (input.lineage) return await runSubagentSession(state);
  for (const pending of carry?.pendingCleanups ?? []) {
    watchCleanup(state, pending.entry, pending.handle);
  }
  // Registered in this order (a buffered Update runs when its handler is set).
  setReadyHandler(state);
  setSendHandler(state);
  setAbortHandler(state);
  setHandoffHandler(state);
  setCloseHandler(state);
  setApprovalHandler(state);
  setSessionQueries(state);
  setUpgradeHandler(state);
  setBudgetHandler(state);
  watchSearchAttributes(state);

  try {
    // A later run of the session: SessionStart ran in the first run, never again.
    if (!carry) {
      await listSessionMcpTools(state);
      await runSessionStart(state);
    }
    if (state.startError) return await endFailedStart(state);
    state.status = 'open';
    setCurrentDetails('idle');
    // Without an idle timeout the loop has nothing to do when a prompt starts or ends (no
    // timer to restart): it waits for the close or a rollover only. Each wake-up would make a
    // new condition (promises, and a stack trace for each) in every send's workflow tasks.
    const wakeOnActivity = input.idleTimeoutMs !== undefined;

    for (;;) {
      const seen = state.activitySeq;
      const wake = () =>
        state.status === 'closed' ||
        (wakeOnActivity && state.activitySeq !== seen) ||
        rolloverDue(state, state.input);
      const woke =
        input.idleTimeoutMs === undefined
          ? await condition(wake).then(() => true)
          : await condition(wake, input.idleTimeoutMs, { summary: 'idle timeout' });
      if ((state.status as SessionDescription['status']) === 'closed') break;
      if (rolloverDue(state, state.input)) {
        // state.input: after an upgrade, the new run carries the version moved to.
        await rollover(state, state.input);
        continue;
      }
      if (input.idleTimeoutMs === undefined) continue;
      if (!woke && state.current === undefined && state.status === 'open') {
        await endWithoutCaller(state, 'idle_timeout');
        break;
      }
      if (state.current !== undefined)
        await condition(() => state.current === undefined || state.status === 'closed');
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled from outside (CLI, UI, client): end the session once, then report the cancel.
    if (state.current && !state.current.abort) {
      state.current.abort = {
        abortId: `cancelled:${uuid4()}`,
        reason: {
          name: 'CancelledFailure',
          message: `Session '${input.sessionId}' was cancelled from outside`,
        },
      };
    }
    await CancellationScope.nonCancellable(async () => {
      // The same cancel reached the prompt: its sub-agents end (their SessionEnd) first.
      if (state.children?.size) await condition(() => runningChildren(state) === 0);
      await endWithoutCaller(state, 'cancelled');
      if (holdsLeases(state)) await returnLeases(state, 'all');
      await condition(allHandlersFinished);
    });
    syncSearchAttributes(state);
    throw error;
  }
  return await closedResult(state);
}

/** The closed session's result, once its leases are back and its handlers have finished. */
async function closedResult(state: SessionState): Promise<SessionWorkflowResult> {
  const { input } = state;
  if (holdsLeases(state)) await returnLeases(state, 'all');
  await condition(allHandlersFinished);
  syncSearchAttributes(state);
  setCurrentDetails(`closed (${state.endReason ?? state.endMarker?.reason ?? 'other'})`);
  return {
    sessionId: input.sessionId,
    endReason: state.endReason ?? state.endMarker?.reason ?? 'other',
    promptsHandled: state.promptsHandled,
    timeline: state.timeline,
    ...(state.archives.length > 0 ? { archives: state.archives } : {}),
  };
}
