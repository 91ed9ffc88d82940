/**
 * The session's `abort` Update: cancel the running prompt (or a queued one, by its request
 * id) and answer once it has stopped. Workflow code.
 *
 * @module
 */
import { condition } from '@temporalio/workflow';
import { Updates, type AbortRecord } from '../../src/common/messages.js';
import type { SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';

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
    if (request.requestId !== undefined && state.current?.requestId !== request.requestId) {
      // A send()'s own signal: abort that prompt only, even if it has not started yet.
      if (state.serving < state.nextTicket) state.queuedAborts.set(request.requestId, record);
      return { aborted: false };
    }
    return { aborted: await abortCurrent(state, record) };
  });
}
