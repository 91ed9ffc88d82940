/**
 * Retried, yet at most once: an activity attempt has the server record, in its heartbeat
 * details, that it begins the user's code (hook callbacks, a tool), before that code runs. A
 * later attempt that finds the record does not run the code again. So an attempt lost before
 * it began (a task the matching service marked started but never delivered, a worker killed
 * as it received the task) is retried at the cost of a heartbeat timeout, and one lost after
 * it began ends as lost, as it did when such activities were never retried.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '@temporalio/activity';
import { ActivityCancelledError, ActivityNotFoundError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { messageOf } from '../src/common/errors.js';

/**
 * The heartbeat details of an attempt that began the user's code: the server recorded them
 * before that code ran. `began` names the work (a dispatch's `dispatchId`, a call's
 * `toolUseId`); `progress` is what the running code last reported through its own heartbeat.
 */
interface AttemptBegan {
  began: string;
  progress?: unknown;
}

/** How many times an attempt sends its record before it gives up (nothing ran). */
const RECORD_TRIES = 3;
/** The wait before the record's second try, ms; doubled before the third. */
const RECORD_BACKOFF_MS = 100;

/** The record of the attempt running in `ctx`, once {@link recordBegan} has sent it. */
const records = new WeakMap<Context, AttemptBegan>();

/**
 * The record this attempt sent, for every later heartbeat of the attempt to repeat: a
 * heartbeat replaces the server's details with its own, and one without the record would
 * erase it. Code running inside another activity's attempt (an inline hook dispatch in a
 * tool's) repeats that activity's record.
 */
export function beganRecordOf(ctx: Context): AttemptBegan | undefined {
  return records.get(ctx);
}

/**
 * A heartbeat of this attempt: `progress` (when given) with the attempt's record kept.
 * Without a record, `progress` goes as it is.
 */
export function heartbeatKeepingRecord(ctx: Context, progress?: unknown): void {
  const record = records.get(ctx);
  if (!record) return ctx.heartbeat(progress);
  ctx.heartbeat(progress === undefined ? record : { ...record, progress });
}

/** How a {@link recordBegan} ended, when it did not throw. */
type RecordOutcome =
  /** The server holds the record: run the code. */
  | 'recorded'
  /** No server to record it on (`MockActivityEnvironment` without a client): run the code. */
  | 'no-server'
  /** The workflow cancelled the attempt before anything ran; the worker knows it now. */
  | 'cancelled';

/**
 * Record, confirmed by the server, that this attempt begins `began.began`.
 * `Context.heartbeat` sends nothing at once and reports no failure, so the record goes as a
 * heartbeat RPC of its own, with this attempt's task token through the worker's connection.
 * A lost reply (a frontend crash after forwarding, a deadline) is sent again: the same
 * details twice are harmless, and giving up would cost the next attempt its work (it would
 * find the record and end as lost although nothing ran).
 * @param what the work, for the error message: "Hook PreToolUse dispatch", "Tool Bash".
 * @param notBegunType `ApplicationFailure.type` of the failure thrown when the server did
 *   not confirm the record.
 * @param cancelWaitMs how long to wait, on a cancellation, until the worker itself knows of
 *   it: a CancelledFailure thrown before it does is reported as a failure.
 * @throws ApplicationFailure of type `notBegunType`, retryable (nothing ran), when the
 *   server did not confirm the record after 3 tries, or refused it (`NotFound`: another
 *   attempt runs, or none).
 */
export async function recordBegan(
  ctx: Context,
  began: AttemptBegan,
  what: string,
  notBegunType: string,
  cancelWaitMs: number,
): Promise<RecordOutcome> {
  let client: Context['client'];
  try {
    client = ctx.client;
  } catch {
    return 'no-server';
  }
  let error: unknown;
  for (let tryNo = 0; tryNo < RECORD_TRIES; tryNo++) {
    if (tryNo > 0) await delay(RECORD_BACKOFF_MS * 2 ** (tryNo - 1), ctx.cancellationSignal);
    try {
      await client.activity.heartbeat(ctx.info.taskToken, began);
      records.set(ctx, began);
      return 'recorded';
    } catch (caught) {
      error = caught;
      if (caught instanceof ActivityCancelledError || ctx.cancellationSignal.aborted) {
        await untilWorkerKnowsCancel(ctx, began, cancelWaitMs);
        return 'cancelled';
      }
      if (caught instanceof ActivityNotFoundError) break;
    }
  }
  throw ApplicationFailure.create({
    type: notBegunType,
    message: `${what} could not record its start (nothing ran): ${messageOf(error)}`,
    cause: error instanceof Error ? error : undefined,
  });
}

/**
 * Wait (bounded) until the worker itself knows of the cancellation the server reported. One
 * heartbeat asks the server, whose answer carries the cancel.
 */
async function untilWorkerKnowsCancel(
  ctx: Context,
  began: AttemptBegan,
  waitMs: number,
): Promise<void> {
  if (ctx.cancellationSignal.aborted) return;
  ctx.heartbeat(began);
  await Promise.race([ctx.cancelled.catch(() => undefined), delay(waitMs)]);
}

/**
 * Whether an earlier attempt of this activity began `id` (its record is in the details the
 * server hands this attempt): that attempt's worker was lost with the code running.
 */
export function earlierAttemptBegan(ctx: Context, id: string): boolean {
  if (ctx.info.attempt <= 1) return false;
  const prior = ctx.info.heartbeatDetails as Partial<AttemptBegan> | undefined;
  return prior?.began === id;
}

/**
 * What an attempt that began the user's code throws: a cancellation or a non-retryable
 * failure as it is, anything else made non-retryable (its message and type kept), so that no
 * later attempt is scheduled only to report the loss.
 */
export function finalFailure(error: unknown): unknown {
  if (error instanceof CancelledFailure) return error;
  if (error instanceof ApplicationFailure && error.nonRetryable) return error;
  const cause = error instanceof Error ? error : undefined;
  return ApplicationFailure.create({
    message: messageOf(error),
    type: (error instanceof ApplicationFailure ? error.type : cause?.name) ?? 'Error',
    nonRetryable: true,
    ...(cause ? { cause } : {}),
  });
}

/** Wait `ms`; an abort of `signal` ends the wait early instead of throwing. */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
}
