/**
 * A session as one workflow execution. Prompts, abort, close and handoff arrive as Updates
 * (an update id dedupes a retried client call); SessionStart runs once when the workflow
 * starts; a marker recorded before SessionEnd is scheduled makes it run at most once, on
 * every path that ends the session.
 *
 * @module
 */
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  patched,
  upsertMemo,
  uuid4,
  log,
} from '@temporalio/workflow';
import { serializeError, type SerializedError } from '../src/common/errors.js';
import { HookEvent } from '../src/common/hook-events.js';
import { applySessionStart } from '../src/common/hook-rules.js';
import {
  appendToContext,
  contextForModel,
  contextOf,
  tokensOfChars,
} from '../src/common/context.js';
import { DEFAULTS } from '../src/common/defaults.js';
import {
  Queries,
  Updates,
  type AbortRecord,
  type SendResult,
  type SessionDescription,
  type SessionWorkflowInput,
  type SessionWorkflowResult,
} from '../src/common/protocol.js';
import type { SessionEndReason } from '../src/common/types.js';
import { cleanupPendingFailure, dispatchEvent, watchCleanup } from './dispatch.js';
import { sessionClosedFailure, toFailure } from './failures.js';
import { runPrompt } from './prompt-run.js';
import { contextStamper } from './context-sync.js';
import { countingSetHandler } from './update-count.js';
import { lastPrompt, pageOf } from './conversation-pages.js';
import { rememberSend, rollingOverFailure, rollover, rolloverDue } from './rollover.js';
import type { CloseAttempt, PromptRun, SessionState } from './session-state.js';

/**
 * Workflow changes guarded with `patched()`, so histories recorded before them still replay.
 * `abort()` used to answer at once; it now answers once the prompt has stopped.
 */
const PATCH_ABORT_RESOLVES_WHEN_STOPPED = 'abort-resolves-when-stopped';
/** Runs continue as new (archive, then carry); histories from before never did. */
const PATCH_CONTINUE_AS_NEW = 'continue-as-new';
/** A run whose SessionStart failed waits for its callbacks still cleaning up before it ends. */
const PATCH_START_FAILURE_WAITS_FOR_CLEANUP = 'start-failure-waits-for-cleanup';

/** The session workflow. */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<SessionWorkflowResult> {
  const carry = input.carry;
  const maxContextTokens = input.maxContextTokens ?? DEFAULTS.maxContextTokens;
  const state: SessionState = {
    input,
    taskQueue: carry?.taskQueue ?? input.taskQueue,
    timeline: [],
    timelineBase: carry?.timelineBase ?? 0,
    pendingCleanups: new Map(),
    pendingPermissions: new Map(),
    transcript: [],
    context: contextOf(carry?.context ?? [], carry?.compactedMessages ?? 0),
    archives: carry?.archives ?? [],
    transcriptBase: carry?.transcriptBase ?? 0,
    promptsThisRun: 0,
    recentSends: carry?.recentSends ?? [],
    rollingOver: false,
    rolloverAllowed: true,
    transcriptChars: 0,
    rolloverNotBefore: 0,
    addMessage(message) {
      // Serialised once: it sizes both the run's transcript and the context estimate.
      const chars = JSON.stringify(message).length;
      state.transcript.push(message);
      state.transcriptChars += chars;
      appendToContext(state.context, message, maxContextTokens, tokensOfChars(chars));
    },
    modelSteps: carry?.modelSteps ?? 0,
    status: 'starting',
    readyAcked: false,
    serving: 0,
    nextTicket: 0,
    promptsHandled: carry?.promptsHandled ?? 0,
    // A SessionEnd that failed in an earlier run recorded the marker: it never runs again.
    ...(carry?.endMarker ? { endMarker: carry.endMarker } : {}),
    activitySeq: 0,
    queuedAborts: new Map(),
  };
  state.contextStamp = contextStamper(state, maxContextTokens);
  // Updates are counted: a run continues as new long before Temporal's Update limits.
  const setHandler = countingSetHandler(
    () => (state.updatesThisRun = (state.updatesThisRun ?? 0) + 1),
  );
  for (const pending of carry?.pendingCleanups ?? []) {
    watchCleanup(state, pending.entry, pending.handle);
  }
  const describe = (): SessionDescription => ({
    sessionId: input.sessionId,
    status: state.status,
    taskQueue: state.taskQueue,
    ...(state.endMarker ? { sessionEndMarker: state.endMarker } : {}),
    pendingCleanups: state.pendingCleanups.size,
    promptsHandled: state.promptsHandled,
    busy: state.current !== undefined,
  });
  const isClosing = () => state.status === 'closing' || state.status === 'closed';

  setHandler(Updates.ready, async () => {
    await condition(() => state.status !== 'starting');
    state.readyAcked = true;
    if (state.startError) throw toFailure(state.startError);
    return describe();
  });

  const abortedResult = (requestId: string, abort: AbortRecord): SendResult => ({
    requestId,
    status: 'aborted',
    text: '',
    toolCalls: [],
    abort,
  });

  setHandler(
    Updates.send,
    async (request) => {
      state.activitySeq++;
      await condition(() => state.status !== 'starting');
      const ticket = state.nextTicket++;
      await condition(() => state.serving === ticket);
      try {
        if (isClosing() || state.startError) throw sessionClosedFailure(input.sessionId);
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
        const scope = new CancellationScope();
        const current: PromptRun = { scope, requestId: request.requestId, settled: false };
        state.current = current;
        try {
          const result = await scope.run(() => runPrompt(state, request, state.promptsHandled));
          current.finalStatus = result.status;
          rememberSend(state, request.requestId, { result });
          return result;
        } catch (error) {
          if (isCancellation(error) && current.abort) {
            current.finalStatus = 'aborted';
            const aborted = abortedResult(request.requestId, current.abort);
            rememberSend(state, request.requestId, { result: aborted });
            return aborted;
          }
          if (!isCancellation(error)) {
            rememberSend(state, request.requestId, { failure: failureToSerialized(error) });
          }
          throw error;
        } finally {
          current.settled = true;
          state.current = undefined;
          state.promptsHandled++;
          state.promptsThisRun++;
        }
      } finally {
        state.serving++;
        state.activitySeq++;
      }
    },
    {
      validator: (request) => {
        if (isClosing()) throw sessionClosedFailure(input.sessionId);
        // Refused before it is accepted (nothing recorded): the client retries on the next run.
        if (state.rollingOver) throw rollingOverFailure(input.sessionId);
        if (typeof request?.requestId !== 'string') {
          throw new TypeError('send: requestId must be a string');
        }
      },
    },
  );

  /** Cancel the running prompt with `record` as its abort; resolves once it has stopped. */
  const abortCurrent = async (record: AbortRecord): Promise<boolean> => {
    const current = state.current;
    if (!current || current.abort || current.settled) return false;
    current.abort = record;
    current.scope.cancel();
    await condition(() => current.settled);
    return current.finalStatus === 'aborted';
  };

  setHandler(Updates.abort, async (request) => {
    state.activitySeq++;
    const record: AbortRecord = { abortId: request.abortId, reason: request.reason };
    if (!patched(PATCH_ABORT_RESOLVES_WHEN_STOPPED)) {
      // Sessions recorded before abort() waited for the prompt to stop answer at once.
      const current = state.current;
      if (!current || current.abort) return { aborted: false };
      current.abort = record;
      current.scope.cancel();
      return { aborted: true };
    }
    if (request.requestId !== undefined && state.current?.requestId !== request.requestId) {
      // A send()'s own signal: abort that prompt only, even if it has not started yet.
      if (state.serving < state.nextTicket) state.queuedAborts.set(request.requestId, record);
      return { aborted: false };
    }
    return { aborted: await abortCurrent(record) };
  });

  setHandler(Updates.handoff, (request) => {
    state.activitySeq++;
    if (typeof request?.taskQueue !== 'string' || request.taskQueue === '') {
      throw toFailure({
        name: 'ConfigError',
        code: 'CONFIG_INVALID',
        message: 'handoff: taskQueue must be a non-empty string',
      });
    }
    if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
    if (isClosing()) throw sessionClosedFailure(input.sessionId);
    state.taskQueue = request.taskQueue;
    return describe();
  });

  /**
   * End the session once. Waits out any callback still cleaning up first (the paths that
   * end a session without a caller: idle timeout, cancellation), so the marker is only ever
   * recorded right before SessionEnd is really scheduled, in the same workflow task.
   */
  const endSession = async (reason: SessionEndReason): Promise<{ ran: boolean }> => {
    if (state.endMarker) return { ran: false };
    await condition(() => state.pendingCleanups.size === 0);
    state.endMarker = { reason, at: Date.now() };
    upsertMemo({ sessionEndMarker: state.endMarker });
    const merged = await dispatchEvent(state, HookEvent.SessionEnd, { reason });
    return { ran: merged !== undefined };
  };

  /** End the session on a path no caller waits on (idle timeout, outside cancellation). */
  const endWithoutCaller = async (reason: SessionEndReason): Promise<void> => {
    state.status = 'closing';
    try {
      await endSession(reason);
    } catch (error) {
      log.warn(`SessionEnd failed (${reason})`, { error: serializeError(error) });
    }
    state.endReason = reason;
    state.status = 'closed';
  };

  setHandler(Updates.close, async () => {
    state.activitySeq++;
    if (state.status === 'closed') return { closedNow: false, sessionEndRan: false };
    await condition(() => state.status !== 'starting');
    // A close arriving while another runs shares its outcome.
    if (state.closeInFlight) {
      const attempt = state.closeInFlight;
      await condition(() => attempt.done);
      if ('error' in attempt) throw attempt.error;
      return { closedNow: false, sessionEndRan: false };
    }
    if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
    const attempt: CloseAttempt = { done: false };
    state.closeInFlight = attempt;
    state.status = 'closing';
    // No rollover now: the session ends in this run.
    state.rolloverScope?.cancel();
    try {
      // Stop the running prompt (its send() resolves as aborted with a SessionClosedError).
      await abortCurrent({
        abortId: `close:${uuid4()}`,
        reason: {
          name: 'SessionClosedError',
          code: 'SESSION_CLOSED',
          message: `Session '${input.sessionId}' is closing`,
        },
      });
      await condition(() => state.current === undefined && state.serving === state.nextTicket);
      // Stopping the prompt may have left a callback cleaning up: fail-closed applies.
      if (state.pendingCleanups.size > 0) throw cleanupPendingFailure(state);
      const { ran } = await endSession('other');
      state.endReason ??= 'other';
      state.status = 'closed';
      return { closedNow: true, sessionEndRan: ran };
    } catch (error) {
      // SessionEnd failed or timed out (close() rejects; the marker stays and the next close()
      // closes without calling it again), or a cleanup is pending: the session stays open.
      state.status = 'open';
      attempt.error = error;
      throw error;
    } finally {
      attempt.done = true;
      state.closeInFlight = undefined;
    }
  });

  setHandler(
    Updates.decidePermission,
    (request) => {
      state.activitySeq++;
      const entry = state.pendingPermissions.get(request.requestId)!;
      entry.answer = request.answer;
      return { decided: true as const };
    },
    {
      validator: (request) => {
        const entry = state.pendingPermissions.get(request?.requestId);
        if (!entry || entry.answer) {
          throw toFailure({
            name: 'AgentSdkError',
            code: 'PERMISSION_REQUEST_NOT_FOUND',
            message: `No pending permission request '${String(request?.requestId)}' in session '${input.sessionId}'`,
          });
        }
        const behavior = request.answer?.behavior;
        if (behavior !== 'allow' && behavior !== 'deny') {
          throw new TypeError(`decidePermission: answer.behavior must be 'allow' or 'deny'`);
        }
      },
    },
  );
  setHandler(Queries.conversation, () => state.transcript);
  // What the model sees: the compacted context with its note and cuts.
  setHandler(Queries.conversationPage, (from) => {
    const page = pageOf(contextForModel(state.context, maxContextTokens), from);
    const prompt = Number(from) > 0 ? undefined : lastPrompt(state.transcript);
    return prompt === undefined ? page : { ...page, prompt };
  });
  setHandler(Queries.transcriptPage, (from) => pageOf(state.transcript, from));
  setHandler(Queries.archives, () => ({
    archives: state.archives,
    transcriptBase: state.transcriptBase,
    timelineBase: state.timelineBase,
  }));
  setHandler(Queries.pendingPermissions, () =>
    [...state.pendingPermissions.values()].map((e) => e.request),
  );
  setHandler(Queries.timeline, () => state.timeline);
  setHandler(Queries.describe, describe);
  setHandler(Queries.abortReason, () => state.current?.abort ?? null);

  try {
    // A later run of the session: SessionStart ran in the first run, never again.
    if (!carry)
      try {
        const merged = await dispatchEvent(state, HookEvent.SessionStart, {
          isResume: input.isResume ?? false,
          ...(input.resumeSessionId !== undefined
            ? { resumeSessionId: input.resumeSessionId }
            : {}),
        });
        const decision = merged ? applySessionStart(merged) : { kind: 'ok' as const };
        if (decision.kind === 'fail') {
          state.startError = {
            name: 'HookError',
            code: 'SESSION_START_FAILED',
            message: decision.reason,
            event: HookEvent.SessionStart,
            ...(merged?.decidedBy !== undefined ? { callbackIndex: merged.decidedBy } : {}),
          };
        }
      } catch (error) {
        if (isCancellation(error)) throw error;
        state.startError = failureToSerialized(error);
      }
    if (state.startError) {
      state.status = 'closed';
      await condition(() => state.readyAcked, '1 minute');
      // A SessionStart callback that outlived its dispatch (a timeout) still runs: the run
      // stays open until it settles or its worker is lost, so the id cannot be started afresh
      // (running SessionStart again beside it) meanwhile. Fail-closed, as for any dispatch.
      if (state.pendingCleanups.size > 0 && patched(PATCH_START_FAILURE_WAITS_FOR_CLEANUP)) {
        await condition(() => state.pendingCleanups.size === 0);
      }
      await condition(allHandlersFinished);
      return { sessionId: input.sessionId, startError: state.startError, timeline: state.timeline };
    }
    state.status = 'open';

    for (;;) {
      const seen = state.activitySeq;
      const wake = () =>
        state.status === 'closed' ||
        state.activitySeq !== seen ||
        (state.rolloverAllowed && rolloverDue(state, input));
      const woke =
        input.idleTimeoutMs === undefined
          ? await condition(wake).then(() => true)
          : await condition(wake, input.idleTimeoutMs);
      if ((state.status as SessionDescription['status']) === 'closed') break;
      if (state.rolloverAllowed && rolloverDue(state, input)) {
        // Sessions recorded before continue-as-new existed replay without it. Sessions started
        // by the first code that continued as new (before this patch) carry `maxContextTokens`,
        // added in the same change: they rolled over without a marker, so they replay with it.
        state.rolloverAllowed =
          patched(PATCH_CONTINUE_AS_NEW) || input.maxContextTokens !== undefined;
        if (state.rolloverAllowed) await rollover(state, input);
        continue;
      }
      if (input.idleTimeoutMs === undefined) continue;
      if (!woke && state.current === undefined && state.status === 'open') {
        await endWithoutCaller('idle_timeout');
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
      await endWithoutCaller('cancelled');
      await condition(allHandlersFinished);
    });
    throw error;
  }
  await condition(allHandlersFinished);
  return {
    sessionId: input.sessionId,
    endReason: state.endReason ?? state.endMarker?.reason ?? 'other',
    promptsHandled: state.promptsHandled,
    timeline: state.timeline,
    ...(state.archives.length > 0 ? { archives: state.archives } : {}),
  };
}

function failureToSerialized(error: unknown): SerializedError {
  const detail = (error as { details?: unknown[] } | undefined)?.details?.[0] as
    SerializedError | undefined;
  if (detail && typeof detail.message === 'string' && typeof detail.name === 'string')
    return detail;
  return serializeError(error);
}
