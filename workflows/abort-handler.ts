/**
 * The session's `abort` Update: cancel the running prompt (or a queued one, by its request
 * id) and answer once it has stopped. Workflow code.
 *
 * @module
 */
import { condition, patched } from '@temporalio/workflow';
import { Updates, type AbortRecord } from '../src/common/protocol.js';
import type { SessionState } from './session-state.js';
import { sessionSetHandler } from './update-count.js';

/**
 * Workflow changes guarded with `patched()`, so histories recorded before them still replay.
 * `abort()` used to answer at once; it now answers once the prompt has stopped.
 */
const PATCH_ABORT_RESOLVES_WHEN_STOPPED = 'abort-resolves-when-stopped';

/** Cancel the running prompt with `record` as its abort; resolves once it has stopped. */
export async function abortCurrent(state: SessionState, record: AbortRecord): Promise<boolean> {
  const current = state.current;
  if (!current || current.abort || current.settled) return false;
  current.abort = record;
  current.scope.cancel();
  await condition(() => current.settled);
  return current.finalStatus === 'aborted';
}

/** Register the `abort` Update. */
export function setAbortHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
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
    return { aborted: await abortCurrent(state, record) };
  });
}
