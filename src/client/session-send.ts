/**
 * A session's `send` and `abort` Updates from the client side, each taking its turn among
 * this client's calls to the session, for {@link Session.send} and {@link Session.abort}.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { serializeError } from '../common/errors.js';
import { promptProblem } from '../common/hook-rules.js';
import {
  Updates,
  type AbortRequest,
  type SendRequest,
  type SendResult,
} from '../common/messages.js';
import type { Prompt } from '../common/types.js';
import { rememberAbortReason } from '../definition/registry.js';
import {
  abortedBeforeStart,
  checkPromptSize,
  type SendOptions,
  SendResponse,
} from './send-response.js';
import { sessionUpdate, type UpdateTarget } from './update-calls.js';

/**
 * Send `prompt` as request `requestId` once this client's earlier calls to the session were
 * accepted; the signal aborts this request only. See {@link Session.send}.
 */
export async function sendPrompt(
  target: UpdateTarget,
  prompt: Prompt,
  options: SendOptions,
  requestId: string,
): Promise<{ response: SendResponse; result: SendResult }> {
  const { signal } = options;
  const problem = promptProblem(prompt);
  if (problem) throw new TypeError(`send(): ${problem}`);
  checkPromptSize(prompt);
  // §4.3: a signal already aborted fails at once with the caller's own reason; nothing runs.
  if (signal?.aborted) throw signal.reason;
  // Call order: wait until this client's earlier sends to the session were accepted.
  const handOn = target.calls
    ? await target.calls.sendTurn(target.handle.workflowId, signal)
    : () => undefined;
  // The signal aborts this request only, whether it runs or still waits in the queue.
  let issued = false;
  const onAbort = () => {
    if (issued) void abortPrompt(target, signal?.reason, requestId).catch(() => undefined);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const request: SendRequest = { requestId, prompt };
    // Aborted before the workflow accepted it (while waiting for its turn, or while the run
    // was continuing as new): nothing ran.
    const abortedEarly = (): SendResult | undefined => abortedBeforeStart(requestId, signal);
    const early = abortedEarly();
    if (early) return { response: new SendResponse(early), result: early };
    issued = true;
    const result = await sessionUpdate(target, Updates.send, [request], {
      updateId: requestId,
      whileRollingOver: abortedEarly,
      onAccepted: handOn,
    });
    return { response: new SendResponse(result), result };
  } finally {
    handOn();
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Abort the prompt running now, or the send `requestId` only, with `reason` (an
 * `AbortError` by default). See {@link Session.abort}.
 * @returns whether the prompt ended as aborted.
 */
export async function abortPrompt(
  target: UpdateTarget,
  reason: unknown,
  requestId: string | undefined,
): Promise<boolean> {
  const given = reason ?? abortError();
  const abortId = randomUUID();
  rememberAbortReason(abortId, given);
  const request: AbortRequest = {
    abortId,
    reason: serializeError(given),
    ...(requestId !== undefined ? { requestId } : {}),
  };
  // The sends this client issued before reach the workflow first (an abort() right after a
  // send() stops that send): the abort takes a turn among them, once they were accepted,
  // and sends issued after it wait until it has answered.
  const handOn = target.calls
    ? await target.calls.sendTurn(target.handle.workflowId)
    : () => undefined;
  try {
    const { aborted } = await sessionUpdate(target, Updates.abort, [request], {
      updateId: abortId,
    });
    return aborted;
  } finally {
    handOn();
  }
}

function abortError(): Error {
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  return error;
}
