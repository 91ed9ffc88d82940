/**
 * Continue-as-new: when a session's run rolls over, and what it hands to the next run.
 * Workflow code.
 *
 * @module
 */
import {
  CancellationScope,
  allHandlersFinished,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  workflowInfo,
} from '@temporalio/workflow';
import { serializeError, type SerializedError } from '../../src/common/errors.js';
import { cutPrefix } from '../../src/common/text.js';
import type {
  RunArchive,
  SessionCarry,
  SessionWorkflowInput,
  SessionWorkflowResult,
} from '../../src/common/workflow-io.js';
import type { SendResult } from '../../src/common/messages.js';
import { archiveRunActivity } from '../activity-options.js';
import { toFailure } from './failures.js';
import { MAX_UPDATES_PER_RUN } from './update-count.js';
import type { SessionState } from './state.js';

type SessionWorkflowFn = (input: SessionWorkflowInput) => Promise<SessionWorkflowResult>;

/**
 * A run holding more transcript than this (JSON characters) continues as new even if
 * Temporal does not suggest it: offloaded payloads cost history little but memory in full.
 */
const MAX_RUN_TRANSCRIPT_CHARS = 64_000_000;

/** Prompts to wait after a failed archive before trying to continue as new again. */
const ROLLOVER_RETRY_AFTER_PROMPTS = 10;

/** A send refused while the run archives itself; `Session` retries it on the next run. */
export function rollingOverFailure(sessionId: string) {
  return toFailure({
    name: 'EngineError',
    code: 'SESSION_ROLLING_OVER',
    message: `Session '${sessionId}' is continuing as new; retry the send`,
  });
}

/** How many recent send() results a run hands on, and the largest one kept whole (bytes of JSON). */
const RECENT_SENDS = 16;
const RECENT_SEND_BYTES = 65_536;

/** Keep how a send ended, so the same request id retried in the next run answers the same. */
export function rememberSend(
  state: SessionState,
  requestId: string,
  outcome: { result?: SendResult; failure?: SerializedError },
): void {
  const result = outcome.result;
  const kept =
    result && JSON.stringify(result).length > RECENT_SEND_BYTES
      ? { ...result, text: cutPrefix(result.text, 4096), toolCalls: [] }
      : result;
  state.recentSends.push({
    requestId,
    ...(kept ? { result: kept } : {}),
    ...(outcome.failure ? { failure: outcome.failure } : {}),
  });
  if (state.recentSends.length > RECENT_SENDS) state.recentSends.shift();
}

/**
 * Time to continue as new: something asks for a new run ({@link rolloverWanted}) and the
 * session is quiet: open, no prompt running or queued (so no permission request is pending),
 * no close, every handler done.
 */
export function rolloverDue(state: SessionState, input: SessionWorkflowInput): boolean {
  if (state.status !== 'open' || state.closeInFlight) return false;
  if (state.current !== undefined || state.serving !== state.nextTicket) return false;
  return (
    rolloverWanted(state, input) &&
    state.promptsThisRun > 0 &&
    state.promptsThisRun >= state.rolloverNotBefore &&
    allHandlersFinished()
  );
}

/**
 * Whether anything asks for a new run: Temporal's suggestion (history size or length), the
 * `continueAsNewAfterPrompts` bound, the transcript's memory, or {@link MAX_UPDATES_PER_RUN}
 * Updates accepted in this run.
 */
function rolloverWanted(state: SessionState, input: SessionWorkflowInput): boolean {
  const bound = input.continueAsNewAfterPrompts;
  return (
    workflowInfo().continueAsNewSuggested ||
    (bound !== undefined && state.promptsThisRun >= bound) ||
    state.transcriptChars > MAX_RUN_TRANSCRIPT_CHARS ||
    (state.updatesThisRun ?? 0) >= MAX_UPDATES_PER_RUN
  );
}

/**
 * Archive this run, then continue as new with the carry. If anything happened while the
 * archive was written (a prompt, a close), the rollover waits for the next quiet moment.
 */
export async function rollover(state: SessionState, input: SessionWorkflowInput): Promise<void> {
  const messages = state.transcript.length;
  const timelineEntries = state.timeline.length;
  state.rollingOver = true;
  let archive: RunArchive;
  const scope = new CancellationScope();
  state.rolloverScope = scope;
  try {
    archive = await scope.run(() =>
      archiveRunActivity(
        state.taskQueue,
        `archive run ${(input.carry?.runIndex ?? 0) + 1} before continuing as new`,
      )({
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
    !rolloverDue(state, input) ||
    state.transcript.length !== messages ||
    state.timeline.length !== timelineEntries
  ) {
    return;
  }
  const next: SessionCarry = {
    runIndex: (input.carry?.runIndex ?? 0) + 1,
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
    ...(state.mcpTools ? { mcpTools: state.mcpTools } : {}),
    ...(state.budget ? { budget: state.budget } : {}),
  };
  // The memo (session id, agent name) names the session in lists: the new run keeps it.
  const memo = workflowInfo().memo;
  await makeContinueAsNewFunc<SessionWorkflowFn>(memo ? { memo } : {})({
    ...input,
    carry: next,
  });
}
