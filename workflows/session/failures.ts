/**
 * How errors leave the workflow: as `ApplicationFailure`s whose `type` is the SDK error's
 * name and whose first detail is the serialized error, so clients rebuild the same class.
 *
 * @module
 */
import { ApplicationFailure } from '@temporalio/workflow';
import {
  clipErrorText,
  serializeError,
  type ErrorCode,
  type SerializedError,
} from '../../src/common/errors.js';
import type { HookEvent } from '../../src/common/hook-events.js';

/** A non-retryable failure carrying `error` for the client to rebuild. */
export function toFailure(error: SerializedError): ApplicationFailure {
  // A failure's texts are not payloads: too long, they would fail the workflow task for good.
  const bounded: SerializedError = {
    ...error,
    name: clipErrorText(error.name),
    message: clipErrorText(error.message),
    ...(error.stack !== undefined ? { stack: clipErrorText(error.stack) } : {}),
  };
  return ApplicationFailure.create({
    type: bounded.name,
    message: bounded.message,
    nonRetryable: true,
    details: [bounded],
  });
}

/** A `HookError` with `code`, as a failure. */
export function hookFailure(
  code: ErrorCode,
  message: string,
  details: { event?: HookEvent; callbackIndex?: number; timeoutMs?: number } = {},
): ApplicationFailure {
  return toFailure({
    name: code === 'HOOK_TIMEOUT' ? 'HookTimeoutError' : 'HookError',
    message,
    code,
    ...details,
  });
}

/** A `SessionClosedError`, as a failure. */
export function sessionClosedFailure(sessionId: string): ApplicationFailure {
  return toFailure({
    name: 'SessionClosedError',
    code: 'SESSION_CLOSED',
    message: `Session '${sessionId}' is closed`,
  });
}

/**
 * The serialized error a failure carries as its first detail (one of ours, raised by
 * {@link toFailure}), else `error` serialized.
 */
export function failureToSerialized(error: unknown): SerializedError {
  const detail = (error as { details?: unknown[] } | undefined)?.details?.[0] as
    SerializedError | undefined;
  if (detail && typeof detail.message === 'string' && typeof detail.name === 'string')
    return detail;
  return serializeError(error);
}

/** A failure's message, followed by its cause's when it has one (`Activity task failed: boom`). */
export function failureMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}
