/**
 * The Update calls of a session from the client side: one Update of a session in its call
 * order ({@link sessionUpdate}), the retries that are safe under one update id
 * ({@link retryingUpdate}), and how a Temporal client error becomes the SDK error it carries
 * ({@link toSdkError}), a closed session's naming its termination.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, TemporalFailure, type UpdateDefinition } from '@temporalio/common';
import {
  EngineError,
  SessionClosedError,
  SessionNotFoundError,
  deserializeError,
  causeChain,
  messageOf,
  type SerializedError,
} from '../common/errors.js';
import type { SessionTermination } from '../common/messages.js';
import type { ClientCalls } from './client-calls.js';

/**
 * How long an Update waits out its session's workflow task in failed state, ms (and
 * createSession for a worker to take the session's first task). @internal
 */
export const TASK_FAILURE_WAIT_MS = 40_000;

/**
 * Run one Update call of session `sessionId`, retrying what is safe to retry (the call's
 * update id dedupes): a refusal while the run archives itself before continuing as new (up
 * to 200 times, every 20-200 ms; `whileRollingOver` may answer instead), a workflow task in
 * failed state or an Update the server aborted (for 40 s from the first such refusal: a task
 * stays failed until a worker runs the next one, up to the workflow task timeout after a
 * worker died holding it), and a call
 * that reached a run as it continued as new (5 times). Every Update of a {@link Session} and
 * createSession's `ready` go through it.
 *
 * @param call issues the Update once (the same update id on every attempt)
 * @throws the last attempt's error as Temporal's client gave it (callers convert it with
 *   {@link toSdkError}); `ENGINE_ERROR` when the client of `calls` was closed meanwhile.
 * @internal
 */
export async function retryingUpdate<T>(
  call: () => Promise<T>,
  options: {
    /** The Update's name, for the error of a closed client. */
    name: string;
    sessionId: string;
    handle: WorkflowHandle;
    /** The client's calls: each attempt runs under them, keyed by the workflow id. */
    calls?: ClientCalls;
    whileRollingOver?: () => T | undefined;
  },
): Promise<T> {
  const { name, sessionId, handle, calls, whileRollingOver = () => undefined } = options;
  /** When the workflow task was first seen in failed state, ms (see below). */
  let failingSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await (calls ? calls.run(handle.client.connection, call, handle.workflowId) : call());
    } catch (error) {
      if (calls?.closed) {
        throw new EngineError(
          'ENGINE_ERROR',
          `The client of session ${sessionId} was closed while its ${name} call was in flight`,
          { cause: error },
        );
      }
      // The server's own bound on a call waiting for the workflow to take the Update (its
      // context deadline, not this client's: none is set here) passed while a loaded worker
      // had not taken it yet: wait on, as Temporal's client does while the Update is only
      // admitted; the same update id keeps it one Update.
      if (isServerDeadline(error)) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 1000)));
        continue;
      }
      // A workflow task that failed transiently (e.g. new events raced its commands)
      // drops the update it carried; the same update id makes the retry safe. An update
      // that reached a run as it continued as new goes to the new run.
      // A send refused while the run archives itself before continuing as new: the new
      // run takes it a moment later.
      if (carriedError(error)?.code === 'SESSION_ROLLING_OVER' && attempt < 200) {
        const instead = whileRollingOver();
        if (instead !== undefined) return instead;
        await new Promise((resolve) => setTimeout(resolve, Math.min(20 * attempt, 200)));
        continue;
      }
      // A workflow task in failed state stays so until a worker runs the next one: after
      // a worker died holding it, up to the workflow task timeout (10 s by default). Retry
      // for 40 s from the first such refusal (each attempt itself takes time: counted in);
      // anything else transient, 5 times.
      const transient = isTransientTaskFailure(error);
      if (transient) failingSince ??= Date.now();
      if (transient ? Date.now() - failingSince! >= TASK_FAILURE_WAIT_MS : attempt >= 5) {
        throw error;
      }
      if (!transient && !(await rolledOver(handle, error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 1000)));
    }
  }
}

/** Whether `error` says the run completed while the session still runs (continued as new). */
async function rolledOver(handle: WorkflowHandle, error: unknown): Promise<boolean> {
  if (!isCompletedError(error)) return false;
  return handle.describe().then(
    (d) => d.status.name === 'RUNNING',
    () => false,
  );
}

/** Turn a Temporal client error into the SDK error it carries. */
export function toSdkError(error: unknown, sessionId: string): Error {
  if (error instanceof EngineError) return error;
  if (error instanceof WorkflowNotFoundError) return new SessionNotFoundError(sessionId);
  if (isNotFound(error)) return new SessionNotFoundError(sessionId);
  const carried = carriedError(error);
  if (carried) return deserializeError(carried);
  if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowFailedError) {
    const cause = error.cause;
    return new EngineError('ENGINE_ERROR', cause?.message ?? error.message, { cause: error });
  }
  if (error instanceof Error) {
    // Temporal's client says `Workflow Update failed` for every refusal of the call itself:
    // the server's reason comes with it.
    const detail = serverDetail(error);
    const message = detail ? `${error.message}: ${detail}` : error.message;
    return new EngineError('ENGINE_ERROR', message, { cause: error });
  }
  return new EngineError('ENGINE_ERROR', String(error));
}

/** The serialized SDK error a failure chain carries, if any. */
function carriedError(error: unknown): SerializedError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current; depth++) {
    if (current instanceof ApplicationFailure) {
      const detail = current.details?.[0] as SerializedError | undefined;
      if (detail && typeof detail.name === 'string' && typeof detail.message === 'string')
        return detail;
    }
    current = (current as { cause?: unknown }).cause;
    if (!(current instanceof Error) && !(current instanceof TemporalFailure)) break;
  }
  return undefined;
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: number; name?: string } | undefined;
  return e?.code === 5 || e?.name === 'WorkflowNotFoundError';
}

/**
 * Whether `error` is the server's refusal of an Update that a retry with the same update id
 * gets through: the workflow task is in failed state (or a failed task dropped the update it
 * carried), or the server aborted the Update as it reloaded the workflow (`Unavailable`
 * "workflow update was aborted", after Temporal's client retried it ten times). Looked for
 * along the cause chain, so an SDK error wrapping the client's error counts too. Retried by
 * {@link retryingUpdate}; `approve --wait` retries it until its deadline.
 * @internal
 */
export function isTransientTaskFailure(error: unknown): boolean {
  return causeChain(error).some((e) => {
    const details = (e as { details?: unknown }).details;
    const text = `${messageOf(e)} ${typeof details === 'string' ? details : ''}`;
    return (
      /Workflow Task in failed state|unexpected workflow task failure/i.test(text) ||
      /workflow update was aborted(?! by closing)/i.test(text)
    );
  });
}

/**
 * Whether `error` is the server's deadline on an Update call (gRPC `DEADLINE_EXCEEDED` with the
 * server's `context deadline exceeded`), not the caller's: a deadline of the caller's own
 * (`connection.withDeadline`) ends in Temporal's client first, with grpc-js's `Deadline
 * exceeded` and no server answer. @internal
 */
export function isServerDeadline(error: unknown): boolean {
  return causeChain(error).some((e) => {
    const { code, details } = e as { code?: unknown; details?: unknown };
    return (
      code === 4 && typeof details === 'string' && /^context deadline exceeded$/i.test(details)
    );
  });
}

/**
 * What the server said under a client error (the `details` of the gRPC error it wraps, e.g.
 * `Unable to perform workflow execution update due to unexpected workflow task failure.`),
 * when the error's own message does not already say it.
 */
function serverDetail(error: Error): string | undefined {
  for (const e of causeChain(error).slice(1)) {
    const details = (e as { details?: unknown }).details;
    if (typeof details === 'string' && details !== '' && !error.message.includes(details)) {
      return details;
    }
  }
  return undefined;
}

/**
 * Whether `error` says the run closed under the call: it had completed before the call
 * reached it, or it closed (terminated, say) while an Update was in flight.
 */
function isCompletedError(error: unknown): boolean {
  return causeChain(error).some((e) =>
    /already completed|workflow completed before the update completed/i.test(messageOf(e)),
  );
}

/** The session an Update goes to. */
export interface UpdateTarget {
  readonly sessionId: string;
  readonly handle: WorkflowHandle;
  /** The client's calls, for the call order of sends; absent for a handle without them. */
  readonly calls: ClientCalls | undefined;
}

/** Options of {@link sessionUpdate}. */
export interface UpdateOptions<T> {
  /** The Update's id. @default a random UUID */
  updateId?: string;
  whileRollingOver?: () => T | undefined;
  onAccepted?: () => void;
}

/**
 * Run an Update, retrying what is safe to retry (the update id dedupes).
 * `whileRollingOver` answers instead when the run refuses it while continuing as new;
 * `onAccepted` is called once the workflow accepted it (then the result is awaited).
 */
export async function sessionUpdate<T, A extends unknown[]>(
  target: UpdateTarget,
  definition: UpdateDefinition<T, A>,
  args: NoInfer<A>,
  options: UpdateOptions<T> = {},
): Promise<T> {
  const { updateId = randomUUID(), whileRollingOver = () => undefined, onAccepted } = options;
  const { sessionId, handle, calls } = target;
  // Temporal's client has one overload for updates with arguments and one for those
  // without; `definition` typed `args` at the call site, so one call serves both.
  const update = definition as unknown as UpdateDefinition<T, [unknown, ...unknown[]]>;
  const updateArgs = args as unknown as [unknown, ...unknown[]];
  const call = async (): Promise<T> => {
    if (!onAccepted || !calls) {
      return handle.executeUpdate(update, { args: updateArgs, updateId });
    }
    // One request, answered when the Update completes, while no later send of this client
    // waits for this one. Once one does, a second request for the same update id (the
    // server answers it for the Update already there, or starts it: the same one) returns
    // as soon as the workflow accepted it, and hands the turn on then: the later send holds
    // its place behind this one in the workflow's queue. One answered at once may have been
    // refused (a run rolling over): it is retried below before the next one may go.
    const stopWatching = calls.whenWaitedOn(handle.workflowId, () => {
      void calls
        .run(
          handle.client.connection,
          async () => {
            calls.watchStart(updateId);
            try {
              await handle.startUpdate(update, {
                args: updateArgs,
                updateId,
                waitForStage: WorkflowUpdateStage.ACCEPTED,
              });
              if (calls.takeStart(updateId) === 'running') onAccepted();
            } finally {
              calls.takeStart(updateId);
            }
          },
          handle.workflowId,
        )
        // The request that waits for the result reports what went wrong.
        .catch(() => undefined);
    });
    try {
      return await handle.executeUpdate(update, { args: updateArgs, updateId });
    } finally {
      stopWatching();
    }
  };
  try {
    return await retryingUpdate(call, {
      name: definition.name,
      sessionId,
      handle,
      ...(calls ? { calls } : {}),
      whileRollingOver,
    });
  } catch (error) {
    const converted = toSdkError(error, sessionId);
    if (converted instanceof EngineError && isCompletedError(error)) {
      throw await closedError(sessionId, handle);
    }
    if (converted instanceof SessionNotFoundError) {
      // The workflow may have completed (closed) rather than never existed.
      const closed = await handle.describe().then(
        (d) => d.status.name !== 'RUNNING',
        () => false,
      );
      if (closed) throw await closedError(sessionId, handle);
    }
    throw converted;
  }
}

/** The error of a call that reached a closed session; it names a termination. */
async function closedError(sessionId: string, handle: WorkflowHandle): Promise<SessionClosedError> {
  const terminated = await sessionTermination(handle);
  if (!terminated) return new SessionClosedError(sessionId);
  const because = terminated.reason ? `: ${terminated.reason}` : '';
  return new SessionClosedError(
    sessionId,
    `Session '${sessionId}' was terminated${because} (SessionEnd did not run)`,
  );
}

/** `HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT` of Temporal's API: only the run's last event. */
const CLOSE_EVENT_ONLY = 2;

/** How the session was terminated, when it was (its newest run ended as TERMINATED). */
export async function sessionTermination(
  handle: WorkflowHandle,
): Promise<SessionTermination | undefined> {
  const client = handle.client;
  const description = await handle.describe().catch(() => undefined);
  if (description?.status.name !== 'TERMINATED') return undefined;
  const history = await client.workflowService
    .getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId: handle.workflowId, runId: description.runId },
      historyEventFilterType: CLOSE_EVENT_ONLY,
    })
    .catch(() => undefined);
  const event = history?.history?.events?.at(-1);
  const attributes = event?.workflowExecutionTerminatedEventAttributes;
  return {
    reason: attributes?.reason ?? '',
    at: description.closeTime ?? new Date(0),
  };
}
