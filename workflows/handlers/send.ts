/**
 * The session's `send` Update: prompts run one at a time, in the order they arrived (a
 * ticket each), and a send retried across a rollover answers what it answered before.
 * Workflow code.
 *
 * @module
 */
import {
  CancellationScope,
  condition,
  isCancellation,
  setCurrentDetails,
} from '@temporalio/workflow';
import {
  Updates,
  type AbortRecord,
  type SendRequest,
  type SendResult,
  type ToolCallRecord,
} from '../../src/common/messages.js';
import { promptProblem } from '../../src/common/hook-rules.js';
import { failureToSerialized, sessionClosedFailure, toFailure } from '../session/failures.js';
import { runPrompt } from '../prompt/run.js';
import { hasIdleReturns, returnLeases } from '../prompt/shared-budget.js';
import { rememberSend, rollingOverFailure } from '../session/rollover.js';
import { isClosing, type PromptRun, type SessionState } from '../session/state.js';
import { closeStreamOutbox, hasQueuedStreamEvents } from '../session/stream-outbox.js';
import { sessionSetHandler } from '../session/update-count.js';

/** Register the `send` Update (and its validator). */
export function setSendHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  const { input } = state;
  setHandler(Updates.send, (request) => send(state, request), {
    validator: (request) => {
      if (isClosing(state)) throw sessionClosedFailure(input.sessionId);
      // Refused before it is accepted (nothing recorded): the client retries on the next run.
      if (state.rollingOver) throw rollingOverFailure(input.sessionId);
      if (typeof request?.requestId !== 'string') {
        throw new TypeError('send: requestId must be a string');
      }
      // From a client that did not check it: refused before it is accepted, nothing recorded
      // (a prompt of another shape would fail every workflow task of the session).
      const problem = promptProblem(request.prompt);
      if (problem) throw new TypeError(`send: ${problem}`);
    },
  });
}

/** Wait for the prompt's turn, then run it (or answer what it answered in an earlier run). */
async function send(state: SessionState, request: SendRequest): Promise<SendResult> {
  const { input } = state;
  state.activitySeq++;
  // A send that finds the session started and nothing ahead of it runs at once, without
  // waiting on a `condition()` that is already true (each costs the workflow task a few
  // promises; a promise in workflow code costs a stack trace).
  const started = state.status !== 'starting';
  if (!started) await condition(() => state.status !== 'starting');
  const ticket = state.nextTicket++;
  if (!started || state.serving !== ticket) await condition(() => state.serving === ticket);
  try {
    if (isClosing(state) || state.startError) throw sessionClosedFailure(input.sessionId);
    // Sent to the run before a rollover, answered there, retried here: it ran once.
    const answered = state.recentSends.find((r) => r.requestId === request.requestId);
    if (answered?.failure) throw toFailure(answered.failure);
    if (answered?.result) return answered.result;
    // Aborted by its own signal while it waited in the queue: it never starts.
    const early = state.queuedAborts.get(request.requestId);
    if (early) {
      state.queuedAborts.delete(request.requestId);
      return abortedResult(request.requestId, early);
    }
    const scope = promptScope(state);
    const current: PromptRun = {
      scope,
      requestId: request.requestId,
      settled: false,
      toolCalls: [],
    };
    state.current = current;
    try {
      const result = await scope.run(() =>
        runPrompt(state, request, state.promptsHandled, current.toolCalls),
      );
      current.finalStatus = result.status;
      rememberSend(state, request.requestId, { result });
      return result;
    } catch (error) {
      if (isCancellation(error) && current.abort) {
        current.finalStatus = 'aborted';
        const aborted = abortedResult(request.requestId, current.abort, current.toolCalls);
        rememberSend(state, request.requestId, { result: aborted });
        return aborted;
      }
      if (!isCancellation(error)) {
        rememberSend(state, request.requestId, { failure: failureToSerialized(error) });
      }
      throw error;
    } finally {
      // Permission events no later activity carried (a denial ended the send) go out
      // before the send answers, so they precede the stream's final event. With none, no
      // await: an async call with nothing to do still costs the workflow task four promises.
      if (hasQueuedStreamEvents(state, request.requestId)) {
        await closeStreamOutbox(state, request.requestId);
      }
      // A lease of a shared budget near its cap goes back when the prompt ends.
      if (hasIdleReturns(state)) await returnLeases(state, 'idle');
      current.settled = true;
      state.current = undefined;
      // The next prompt, if one is queued, says what it runs as soon as it starts.
      setCurrentDetails(isClosing(state) ? 'closing' : 'idle');
      state.promptsHandled++;
      state.promptsThisRun++;
    }
  } finally {
    state.serving++;
    state.activitySeq++;
  }
}

/**
 * The scope of the prompts: the run's, or a new one once an abort (or a cancel) ended it.
 * Prompts share one scope rather than one each (a scope costs a send three promises); they
 * run one at a time, so an abort still cancels the running prompt's work only.
 */
function promptScope(state: SessionState): CancellationScope {
  if (!state.promptScope || state.promptScope.consideredCancelled) {
    state.promptScope = new CancellationScope();
  }
  return state.promptScope;
}

/** An aborted send's result: the tool calls it made before the abort, each with its outcome. */
function abortedResult(
  requestId: string,
  abort: AbortRecord,
  toolCalls: ToolCallRecord[] = [],
): SendResult {
  return { requestId, status: 'aborted', text: '', toolCalls, abort };
}
