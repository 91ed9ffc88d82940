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
  makeContinueAsNewFunc,
  workflowInfo,
  defineQuery,
  defineUpdate,
  isCancellation,
  patched,
  setHandler,
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
  type ContextWindow,
} from '../src/common/context.js';
import { DEFAULTS } from '../src/common/defaults.js';
import {
  Queries,
  Updates,
  CONVERSATION_PAGE_BYTES,
  type AbortRecord,
  type ConversationPage,
  type AbortRequest,
  type RecentSend,
  type RunArchive,
  type SessionCarry,
  type PermissionDecisionRequest,
  type CloseResult,
  type SendRequest,
  type SendResult,
  type SessionDescription,
  type SessionWorkflowInput,
  type SessionWorkflowResult,
  type TimelineEntry,
} from '../src/common/protocol.js';
import type { Prompt, SessionEndReason } from '../src/common/types.js';
import { cleanupPendingFailure, dispatchEvent, watchCleanup } from './dispatch.js';
import { archiveRunActivity } from './activity-options.js';
import type { PromptState } from './prompt-run.js';
import type { ConversationMessage } from '../src/common/conversation.js';
import type { PendingPermission } from '../src/common/permission.js';
import { sessionClosedFailure, toFailure } from './failures.js';
import { runPrompt } from './prompt-run.js';

/**
 * Workflow changes guarded with `patched()`, so histories recorded before them still replay.
 * `abort()` used to answer at once; it now answers once the prompt has stopped.
 */
const PATCH_ABORT_RESOLVES_WHEN_STOPPED = 'abort-resolves-when-stopped';
/** Runs continue as new (archive, then carry); histories from before never did. */
const PATCH_CONTINUE_AS_NEW = 'continue-as-new';

export const readyUpdate = defineUpdate<SessionDescription>(Updates.ready);
export const sendUpdate = defineUpdate<SendResult, [SendRequest]>(Updates.send);
export const abortUpdate = defineUpdate<{ aborted: boolean }, [AbortRequest]>(Updates.abort);
export const closeUpdate = defineUpdate<CloseResult>(Updates.close);
export const handoffUpdate = defineUpdate<SessionDescription, [{ taskQueue: string }]>(
  Updates.handoff,
);
export const timelineQuery = defineQuery<TimelineEntry[]>(Queries.timeline);
export const describeQuery = defineQuery<SessionDescription>(Queries.describe);
export const abortReasonQuery = defineQuery<AbortRecord | null>(Queries.abortReason);
export const conversationQuery = defineQuery<ConversationMessage[]>(Queries.conversation);
export const conversationPageQuery = defineQuery<ConversationPage, [number]>(
  Queries.conversationPage,
);
export const transcriptPageQuery = defineQuery<ConversationPage, [number]>(Queries.transcriptPage);
export const archivesQuery = defineQuery<{
  archives: RunArchive[];
  transcriptBase: number;
  timelineBase: number;
}>(Queries.archives);
export const pendingPermissionsQuery = defineQuery<PendingPermission[]>(Queries.pendingPermissions);
export const decidePermissionUpdate = defineUpdate<{ decided: true }, [PermissionDecisionRequest]>(
  Updates.decidePermission,
);

interface SessionState extends PromptState {
  /** This run's messages (earlier runs' are archived); `session.conversation()` reads them. */
  transcript: ConversationMessage[];
  /** What model steps read by query: the context, kept within `maxContextTokens`. */
  context: ContextWindow;
  /** Earlier runs, archived in the payload store. */
  archives: RunArchive[];
  /** Messages of earlier runs. */
  transcriptBase: number;
  /** Prompts handled in this run (continue-as-new counts from here). */
  promptsThisRun: number;
  /** Recent send() outcomes, so a send retried across a rollover runs once. */
  recentSends: RecentSend[];
  /** Whether this run may continue as new (false when replaying a history from before it could). */
  rolloverAllowed: boolean;
  /** Characters of JSON this run's transcript holds: memory, not history, bounds a run too. */
  transcriptChars: number;
  /** The archive running for a rollover, so a close can stop it. */
  rolloverScope?: CancellationScope;
  /** Set while the run archives itself before continuing as new: new prompts wait. */
  rollingOver: boolean;
  /** After a failed archive, no rollover before this many prompts in the run. */
  rolloverNotBefore: number;
  status: SessionDescription['status'];
  startError?: SerializedError;
  readyAcked: boolean;
  /** Set once, before SessionEnd is scheduled; every later close reads it. */
  endMarker?: { reason: SessionEndReason; at: number };
  endReason?: SessionEndReason;
  /** FIFO of prompts: the ticket being served and the next ticket to hand out. */
  serving: number;
  nextTicket: number;
  promptsHandled: number;
  /** Bumped on every client interaction, for the idle timeout. */
  activitySeq: number;
  current?: PromptRun;
  /** Aborts that arrived for prompts still waiting in the queue, by request id. */
  queuedAborts: Map<string, AbortRecord>;
  closeInFlight?: CloseAttempt;
}

/** The prompt running now. */
interface PromptRun {
  scope: CancellationScope;
  requestId: string;
  abort?: AbortRecord;
  settled: boolean;
  finalStatus?: SendResult['status'];
}

/** One close() in progress, whose outcome concurrent close() calls share. */
interface CloseAttempt {
  done: boolean;
  error?: unknown;
}

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
      state.transcript.push(message);
      state.transcriptChars += JSON.stringify(message).length;
      appendToContext(state.context, message, maxContextTokens);
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

  setHandler(readyUpdate, async () => {
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
    sendUpdate,
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

  setHandler(abortUpdate, async (request) => {
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

  setHandler(handoffUpdate, (request) => {
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

  setHandler(closeUpdate, async () => {
    state.activitySeq++;
    if (state.status === 'closed') return { closedNow: false, sessionEndRan: false };
    await condition(() => state.status !== 'starting');
    // A close arriving while another runs shares its outcome.
    if (state.closeInFlight) {
      const attempt = state.closeInFlight;
      await condition(() => attempt.done);
      if (attempt.error) throw attempt.error;
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
    decidePermissionUpdate,
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
  setHandler(conversationQuery, () => state.transcript);
  // What the model sees: the compacted context with its note and cuts.
  setHandler(conversationPageQuery, (from) => {
    const page = pageOf(contextForModel(state.context, maxContextTokens), from);
    const prompt = Number(from) > 0 ? undefined : lastPrompt(state.transcript);
    return prompt === undefined ? page : { ...page, prompt };
  });
  setHandler(transcriptPageQuery, (from) => pageOf(state.transcript, from));
  setHandler(archivesQuery, () => ({
    archives: state.archives,
    transcriptBase: state.transcriptBase,
    timelineBase: state.timelineBase,
  }));
  setHandler(pendingPermissionsQuery, () =>
    [...state.pendingPermissions.values()].map((e) => e.request),
  );
  setHandler(timelineQuery, () => state.timeline);
  setHandler(describeQuery, describe);
  setHandler(abortReasonQuery, () => state.current?.abort ?? null);

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
      await condition(allHandlersFinished);
      return { sessionId: input.sessionId, startError: state.startError, timeline: state.timeline };
    }
    state.status = 'open';

    for (;;) {
      const seen = state.activitySeq;
      const wake = () =>
        state.status === 'closed' ||
        state.activitySeq !== seen ||
        (state.rolloverAllowed && rolloverDue());
      const woke =
        input.idleTimeoutMs === undefined
          ? await condition(wake).then(() => true)
          : await condition(wake, input.idleTimeoutMs);
      if ((state.status as SessionDescription['status']) === 'closed') break;
      if (state.rolloverAllowed && rolloverDue()) {
        // Sessions recorded before continue-as-new existed replay without it.
        state.rolloverAllowed = patched(PATCH_CONTINUE_AS_NEW);
        if (state.rolloverAllowed) await rollover();
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

  /**
   * Time to continue as new: Temporal suggests it (history size or length) or this run
   * handled `continueAsNewAfterPrompts` prompts, and the session is quiet: open, no prompt
   * running or queued (so no permission request is pending), no close, every handler done.
   */
  function rolloverDue(): boolean {
    if (state.status !== 'open' || state.closeInFlight) return false;
    if (state.current !== undefined || state.serving !== state.nextTicket) return false;
    const bound = input.continueAsNewAfterPrompts;
    const wanted =
      workflowInfo().continueAsNewSuggested ||
      (bound !== undefined && state.promptsThisRun >= bound) ||
      state.transcriptChars > MAX_RUN_TRANSCRIPT_CHARS;
    return (
      wanted &&
      state.promptsThisRun > 0 &&
      state.promptsThisRun >= state.rolloverNotBefore &&
      allHandlersFinished()
    );
  }

  /**
   * Archive this run, then continue as new with the carry. If anything happened while the
   * archive was written (a prompt, a close), the rollover waits for the next quiet moment.
   */
  async function rollover(): Promise<void> {
    const messages = state.transcript.length;
    const timelineEntries = state.timeline.length;
    state.rollingOver = true;
    let archive: RunArchive;
    const scope = new CancellationScope();
    state.rolloverScope = scope;
    try {
      archive = await scope.run(() =>
        archiveRunActivity(state.taskQueue)({
          sessionId: input.sessionId,
          messages,
          timelineEntries,
        }),
      );
    } catch (error) {
      // A close stopped the archive: the session ends in this run.
      if (isCancellation(error) && state.closeInFlight) return;
      if (isCancellation(error)) throw error;
      // The payload store failed: the session goes on in this run and tries again later,
      // rather than refusing prompts while the store is down.
      log.warn('Archiving the run before continue-as-new failed; retrying after more prompts', {
        error: serializeError(error),
      });
      state.rolloverNotBefore = state.promptsThisRun + ROLLOVER_RETRY_AFTER_PROMPTS;
      return;
    } finally {
      state.rollingOver = false;
      state.rolloverScope = undefined;
    }
    // A close (or anything else) that came in meanwhile wins; the rollover waits.
    if (
      !rolloverDue() ||
      state.transcript.length !== messages ||
      state.timeline.length !== timelineEntries
    ) {
      return;
    }
    const next: SessionCarry = {
      runIndex: (carry?.runIndex ?? 0) + 1,
      promptsHandled: state.promptsHandled,
      modelSteps: state.modelSteps,
      timelineBase: state.timelineBase + timelineEntries,
      transcriptBase: state.transcriptBase + messages,
      taskQueue: state.taskQueue,
      context: state.context.messages,
      compactedMessages: state.context.compacted,
      archives: [...state.archives, archive],
      pendingCleanups: [...state.pendingCleanups.values()],
      recentSends: state.recentSends,
      ...(state.endMarker ? { endMarker: state.endMarker } : {}),
    };
    // The memo (session id, agent name) names the session in lists: the new run keeps it.
    const memo = workflowInfo().memo;
    await makeContinueAsNewFunc<typeof sessionWorkflow>(memo ? { memo } : {})({
      ...input,
      carry: next,
    });
  }
}

/**
 * A run holding more transcript than this (JSON characters) continues as new even if
 * Temporal does not suggest it: offloaded payloads cost history little but memory in full.
 */
const MAX_RUN_TRANSCRIPT_CHARS = 64_000_000;

/** Prompts to wait after a failed archive before trying to continue as new again. */
const ROLLOVER_RETRY_AFTER_PROMPTS = 10;

/** A send refused while the run archives itself; `Session` retries it on the next run. */
function rollingOverFailure(sessionId: string) {
  return toFailure({
    name: 'EngineError',
    code: 'SESSION_ROLLING_OVER',
    message: `Session '${sessionId}' is continuing as new; retry the send`,
  });
}

/** How many recent send() results a run hands on, and the largest one kept whole (bytes of JSON). */
const RECENT_SENDS = 16;
const RECENT_SEND_BYTES = 65_536;

function rememberSend(
  state: SessionState,
  requestId: string,
  outcome: { result?: SendResult; failure?: SerializedError },
): void {
  const result = outcome.result;
  const kept =
    result && JSON.stringify(result).length > RECENT_SEND_BYTES
      ? { ...result, text: result.text.slice(0, 4096), toolCalls: [] }
      : result;
  state.recentSends.push({
    requestId,
    ...(kept ? { result: kept } : {}),
    ...(outcome.failure ? { failure: outcome.failure } : {}),
  });
  if (state.recentSends.length > RECENT_SENDS) state.recentSends.shift();
}

/** The newest user message's content, as the prompt reached the model. */
function lastPrompt(messages: ConversationMessage[]): Prompt | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user') return message.content;
  }
  return undefined;
}

/** One page of `messages` from index `from`, under {@link CONVERSATION_PAGE_BYTES}. */
function pageOf(messages: ConversationMessage[], from: unknown): ConversationPage {
  const page: ConversationMessage[] = [];
  let bytes = 0;
  let index = Math.max(0, Math.floor(Number(from) || 0));
  for (; index < messages.length; index++) {
    const message = messages[index]!;
    const size = JSON.stringify(message).length;
    if (page.length > 0 && bytes + size > CONVERSATION_PAGE_BYTES) break;
    page.push(message);
    bytes += size;
  }
  return { messages: page, next: index < messages.length ? index : null };
}

function failureToSerialized(error: unknown): SerializedError {
  const detail = (error as { details?: unknown[] } | undefined)?.details?.[0] as
    SerializedError | undefined;
  if (detail && typeof detail.message === 'string' && typeof detail.name === 'string')
    return detail;
  return serializeError(error);
}
