/**
 * Provider error classification: whatever the Vercel AI SDK raised during one model step,
 * as a {@link ProviderError} whose `retryable` says whether another attempt can help (by
 * HTTP status, network error code, or the SDK's error class), with `statusCode` when the
 * provider answered with an HTTP error.
 *
 * @module
 */
import { STATUS_CODES } from 'node:http';
import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  LoadAPIKeyError,
  NoSuchModelError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from 'ai';
import { ProviderError, type ModelErrorDetails } from '../common/errors.js';
import { cutPrefix } from '../common/text.js';

/** Who a {@link ProviderError} names: the provider and the model id. */
export type ProviderSource = Pick<ModelErrorDetails, 'provider' | 'model'>;

/** Throw `signal`'s reason (as an `Error`) when it has aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof Error) throw reason;
  throw new DOMException(
    reason === undefined
      ? 'The model step was aborted'
      : `The model step was aborted: ${String(reason)}`,
    'AbortError',
  );
}

/** HTTP statuses worth another attempt besides 5xx: request timeout, conflict, rate limit. */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/** Network error codes (on the error or its causes) of failures worth another attempt. */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Turn whatever `streamText` raised (thrown or as an `error` part) into a {@link ProviderError}. */
export function classifyError(
  label: string,
  source: ProviderSource,
  error: unknown,
): ProviderError {
  if (APICallError.isInstance(error)) return classifyApiCallError(label, source, error);
  if (
    LoadAPIKeyError.isInstance(error) ||
    InvalidPromptError.isInstance(error) ||
    InvalidArgumentError.isInstance(error) ||
    NoSuchModelError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error)
  ) {
    // Rejected before or after the request, the same way every time.
    return new ProviderError(`${label}: ${describe(error)}`, {
      retryable: false,
      ...source,
      cause: error,
    });
  }
  if (findNetworkCode(error) !== undefined) {
    return new ProviderError(`${label}: network failure: ${describe(error)}`, {
      retryable: true,
      ...source,
      cause: error,
    });
  }
  // Unknown: let the activity's retry policy (bounded) have a go.
  return new ProviderError(`${label}: ${describe(error)}`, {
    retryable: true,
    ...source,
    cause: error,
  });
}

/** An {@link APICallError}: an HTTP error status, an unreachable server, or an unusable answer. */
function classifyApiCallError(
  label: string,
  source: ProviderSource,
  error: APICallError,
): ProviderError {
  const status = error.statusCode;
  if (status !== undefined && (status < 200 || status >= 300)) {
    const statusText = STATUS_CODES[status] ?? 'Error';
    let detail = error.message.trim();
    if ((detail === '' || detail === statusText) && error.responseBody) {
      detail = snippet(error.responseBody);
    }
    const message = `${label}: ${status} ${statusText}${detail && detail !== statusText ? `: ${detail}` : ''}`;
    return new ProviderError(message, {
      retryable: RETRYABLE_STATUSES.has(status) || status >= 500,
      statusCode: status,
      ...source,
      cause: error,
    });
  }
  const networkCode = findNetworkCode(error);
  if (status === undefined && (error.isRetryable || networkCode !== undefined)) {
    return new ProviderError(`${label}: cannot reach ${error.url}: ${describe(error)}`, {
      retryable: true,
      ...source,
      cause: error,
    });
  }
  // A 2xx the SDK could not read: the endpoint does not speak the provider's protocol.
  return new ProviderError(
    `${label}: ${status === undefined ? '' : `${status} answer from ${error.url} `}unusable: ${describe(error)}`,
    {
      retryable: error.isRetryable,
      ...(status === undefined ? {} : { statusCode: status }),
      ...source,
      cause: error,
    },
  );
}

/** The first retryable network error code on `error` or its chain of causes. */
function findNetworkCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_NETWORK_CODES.has(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/** An error's message, with its innermost cause's when that says more. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let root: Error = error;
  const seen = new Set<Error>([error]);
  while (root.cause instanceof Error && !seen.has(root.cause)) {
    root = root.cause;
    seen.add(root);
  }
  const rootMessage = root.message.trim();
  return root !== error && rootMessage && !error.message.includes(rootMessage)
    ? `${error.message} (${rootMessage})`
    : error.message;
}

/** `text`, cut to 300 characters (never inside one). */
export function snippet(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 300 ? `${cutPrefix(trimmed, 300)}…` : trimmed;
}
