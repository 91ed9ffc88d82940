/**
 * Errors of the SDK: one base class, subclasses grouped by who is at fault, each with a
 * stable `code`. Workflow-safe (no Node APIs), so the workflow raises the same classes'
 * codes as `ApplicationFailure`s whose `type` is the error's name.
 *
 * @module
 */
import type { HookEvent } from './hook-events.js';
import { cutPrefix } from './text.js';

/** Stable error codes. Match on `error.code`, never on messages. */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'HOOK_TIMEOUT'
  | 'HOOK_OUTPUT_INVALID'
  | 'HOOK_CALLBACK_FAILED'
  | 'HOOK_ABORTED'
  | 'HOOK_CLEANUP_PENDING'
  | 'HOOK_WORKER_LOST'
  | 'HOOK_CALLBACKS_MISSING'
  | 'SESSION_NOT_FOUND'
  | 'SESSION_CLOSED'
  | 'SESSION_START_FAILED'
  | 'PERMISSION_REQUEST_NOT_FOUND'
  /**
   * An answer to a permission request named another approval digest than the request's: the
   * call it would run is not the one the person was shown. An `AgentSdkError` whose message
   * names what changed (the input by key, the agent version) or that the digest names no ask.
   */
  | 'PERMISSION_DIGEST_MISMATCH'
  /**
   * An answer to a permission request named no approval digest in a session whose agent has
   * `advanced.requireBoundApprovals`: an `AgentSdkError`; nothing was decided.
   */
  | 'PERMISSION_DIGEST_REQUIRED'
  | 'PROMPT_REJECTED'
  | 'TASK_FAILED'
  | 'MODEL_ERROR'
  | 'TOOL_ERROR'
  | 'TEMPORAL_CLI_UNAVAILABLE'
  | 'TEMPORAL_SERVER_START_FAILED'
  | 'TEMPORAL_TEST_SERVER_UNAVAILABLE'
  | 'ENGINE_ERROR'
  | 'TEMPORAL_UNREACHABLE'
  | 'NAMESPACE_NOT_FOUND'
  | 'WORKER_UNAVAILABLE'
  | 'PAYLOAD_NOT_FOUND'
  | 'PAYLOAD_CORRUPT'
  | 'PAYLOAD_UNDECRYPTABLE'
  | 'SESSION_ROLLING_OVER'
  /**
   * `send`, `close`, `handoff` or `upgrade` of a sub-agent's session (`advanced.subagents`):
   * an `AgentSdkError` whose message names the parent session to act on instead.
   */
  | 'SUBAGENT_SESSION'
  /**
   * No worker of the session's version took one of its tasks within the task's budget:
   * workers of other versions refused it (and ran nothing). A `HookError` for a hook dispatch,
   * else an `EngineError`; the message names both versions.
   */
  | 'WORKER_VERSION_MISMATCH'
  /**
   * A worker claims the session's version with another definition (another fingerprint) and
   * refused the task; the message names what differs. Same classes as `WORKER_VERSION_MISMATCH`.
   */
  | 'VERSION_FINGERPRINT_MISMATCH'
  /**
   * An MCP server could not be started or reached, died or closed its connection mid-call, or
   * is not configured: a `McpServerError` whose message names the server and why.
   */
  | 'MCP_SERVER_UNAVAILABLE';

/** Base class of every error the SDK throws on purpose. */
export class AgentSdkError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad options or input given by the developer. Thrown before anything starts. */
export class ConfigError extends AgentSdkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options);
  }
}

/** A hook callback failed, timed out, returned a malformed output, or blocked the request. */
export class HookError extends AgentSdkError {
  /** The event whose dispatch failed. */
  readonly event: HookEvent | undefined;
  /** 0-based position of the callback at fault, when one is. */
  readonly callbackIndex: number | undefined;
  constructor(
    code: ErrorCode,
    message: string,
    details: { event?: HookEvent; callbackIndex?: number; cause?: unknown } = {},
  ) {
    super(code, message, { cause: details.cause });
    this.event = details.event;
    this.callbackIndex = details.callbackIndex;
  }
}

/**
 * The event's budget ran out before its callbacks finished (contract §4.6). The callback's
 * `abortSignal` aborts with this error and the dispatch fails with it.
 */
export class HookTimeoutError extends HookError {
  /** Always `HOOK_TIMEOUT`. */
  declare readonly code: 'HOOK_TIMEOUT';
  /** The budget that ran out, in milliseconds. */
  readonly timeoutMs: number;
  /** The event whose budget ran out. */
  declare readonly event: HookEvent;
  constructor(event: HookEvent, timeoutMs: number) {
    super('HOOK_TIMEOUT', `Hook ${event} exceeded ${timeoutMs}ms`, { event });
    this.timeoutMs = timeoutMs;
  }
}

/** A session id that no session has. */
export class SessionNotFoundError extends AgentSdkError {
  /** The id asked for. */
  readonly sessionId: string;
  constructor(sessionId: string) {
    super('SESSION_NOT_FOUND', `No session with id '${sessionId}'`);
    this.sessionId = sessionId;
  }
}

/** The session was closed: it takes no more prompts. */
export class SessionClosedError extends AgentSdkError {
  /** The closed session's id. */
  readonly sessionId: string;
  constructor(sessionId: string, message = `Session '${sessionId}' is closed`) {
    super('SESSION_CLOSED', message);
    this.sessionId = sessionId;
  }
}

/** What a {@link ModelError} may say about the failed model call, besides its message. */
export interface ModelErrorDetails {
  /** Whether another attempt of the step may succeed. */
  retryable?: boolean;
  /** HTTP status of the provider's answer, when there was one, e.g. `401`, `503`. */
  statusCode?: number;
  /** Which API answered, e.g. `openai`, `anthropic`, `openai-compatible`. */
  provider?: string;
  /** The provider's model id, e.g. `gpt-4o`. */
  model?: string;
  /** The error underneath, set as the `ModelError`'s `cause`. */
  cause?: unknown;
}

/**
 * A model step failed (after retries, where retrying made sense).
 *
 * `retryable`, `statusCode`, `provider` and `model` are set when the model said (a
 * {@link ProviderError} does), and survive the trip from the worker's model step to the
 * caller of `send()`: a 401 reaches `send()` as an error with `statusCode: 401` and
 * `retryable: false`; a 503 that kept failing until the retries ran out, with
 * `statusCode: 503` and `retryable: true`. A field the model did not give is undefined.
 */
export class ModelError extends AgentSdkError {
  /** Whether another attempt of the step may succeed; undefined when the model did not say. */
  readonly retryable?: boolean;
  /** HTTP status of the provider's answer; undefined when there was none. */
  readonly statusCode?: number;
  /** Which API answered, e.g. `openai-compatible`; undefined when unknown. */
  readonly provider?: string;
  /** The provider's model id; undefined when unknown. */
  readonly model?: string;
  constructor(message: string, details: ModelErrorDetails = {}) {
    super('MODEL_ERROR', message, { cause: details.cause });
    this.retryable = details.retryable;
    this.statusCode = details.statusCode;
    this.provider = details.provider;
    this.model = details.model;
  }
}

/**
 * A model provider's failure, classified (see `providerModel`).
 *
 * `retryable: true` for failures that may pass on a later attempt: HTTP 408, 409, 429 and
 * 5xx, a refused, reset or timed-out connection, and the step's own timeout. The
 * `modelStep` activity lets Temporal's retry policy retry those. `retryable: false` for
 * failures another attempt would repeat: other 4xx (400 bad request, 401 bad key, 403,
 * 404 unknown model), a missing API key, a request the SDK rejects before sending.
 *
 * The message names the provider, the model, the status and the provider's own message,
 * e.g. `openai gpt-4o: 401 Unauthorized: Incorrect API key provided`. The original
 * error is the `cause` (in the worker's process only: it does not cross to the caller).
 */
export class ProviderError extends ModelError {
  /** Whether another attempt of the step may succeed. */
  declare readonly retryable: boolean;
  constructor(message: string, details: ModelErrorDetails & { retryable: boolean }) {
    super(message, details);
  }
}

/** A tool failed in a way that could not be turned into a tool result. */
export class ToolError extends AgentSdkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TOOL_ERROR', message, options);
  }
}

/**
 * An MCP server failed us: it could not be started (a stdio command that does not exist, a
 * process that exits at once) or reached (an HTTP endpoint that does not answer), it died or
 * dropped the connection during a call, or no server of that name is configured. The message
 * names the server and says why; for a stdio server it ends with the last of its stderr.
 */
export class McpServerError extends AgentSdkError {
  /** Always `MCP_SERVER_UNAVAILABLE`. */
  declare readonly code: 'MCP_SERVER_UNAVAILABLE';
  /** The server's name in `mcpServers`. */
  readonly server: string;
  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super('MCP_SERVER_UNAVAILABLE', message, options);
    this.server = server;
  }
}

/** The durable engine (Temporal server, CLI, worker) failed us. */
export class EngineError extends AgentSdkError {
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * The Temporal server could not be reached, or the namespace does not exist on it. Thrown
 * by `createAgent`, `createAgentWorker` and `createAgentClient` (and reported by the CLI)
 * instead of the transport's own error, which stays the `cause`.
 *
 * - `TEMPORAL_UNREACHABLE`: nothing answered at `address` (connection refused, unknown
 *   host, no answer, or something that is not a Temporal frontend).
 * - `NAMESPACE_NOT_FOUND`: the server answered, but has no namespace `namespace`.
 */
export class TemporalConnectionError extends EngineError {
  /** `TEMPORAL_UNREACHABLE` or `NAMESPACE_NOT_FOUND`, as above. */
  declare readonly code: 'TEMPORAL_UNREACHABLE' | 'NAMESPACE_NOT_FOUND';
  /** The `host:port` tried. */
  readonly address: string;
  /** The namespace asked for. */
  readonly namespace: string;
  /**
   * What went wrong, in a few words, e.g. `connection refused (nothing listens on that
   * port)` or `the namespace does not exist`.
   */
  readonly reason: string;
  constructor(
    code: 'TEMPORAL_UNREACHABLE' | 'NAMESPACE_NOT_FOUND',
    message: string,
    details: { address: string; namespace: string; reason: string; cause?: unknown },
  ) {
    super(code, message, { cause: details.cause });
    this.address = details.address;
    this.namespace = details.namespace;
    this.reason = details.reason;
  }
}

/** An error as it crosses a process or workflow boundary. */
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  event?: HookEvent;
  callbackIndex?: number;
  timeoutMs?: number;
  sessionId?: string;
  /** Of a `MODEL_ERROR`: see {@link ModelErrorDetails}. */
  retryable?: boolean;
  statusCode?: number;
  provider?: string;
  model?: string;
  /** Of an `MCP_SERVER_UNAVAILABLE`: the server's name. */
  server?: string;
  stack?: string;
}

/**
 * A hook dispatch that failed, as the timeline entry, a tool call's record
 * (`response.toolCalls[i].hookError`) and `durable-agent inspect` show it.
 */
export interface HookErrorRecord {
  /** The event whose dispatch failed. */
  event: HookEvent;
  /**
   * 0-based position of the callback that threw, returned a malformed output or was running
   * at the deadline; absent when no callback was at fault (a lost worker, a fail-closed
   * refusal, a worker with other callbacks).
   */
  callbackIndex?: number;
  /**
   * What went wrong: `HOOK_OUTPUT_INVALID` (the callback returned `undefined` or an output
   * not of the contract's shape), `HOOK_CALLBACK_FAILED` (it threw an error with no string
   * `code` of its own), the thrown error's own `code`, `HOOK_TIMEOUT`, `HOOK_WORKER_LOST`,
   * `HOOK_CLEANUP_PENDING` or `HOOK_CALLBACKS_MISSING`.
   */
  code: string;
  /** The error's name: `HookError`, `HookTimeoutError`, or that of the error thrown. */
  name: string;
  /** The error's message, cut at `MAX_ERROR_TEXT_CHARS` (32,768). */
  message: string;
}

/** The {@link HookErrorRecord} of a dispatch of `event` that failed with `error`. */
export function hookErrorRecord(
  event: HookEvent,
  error: SerializedError,
  callbackIndex: number | undefined = error.callbackIndex,
): HookErrorRecord {
  const code = error.code ?? 'HOOK_CALLBACK_FAILED';
  // A worker with other callbacks ran none of them: no callback is at fault.
  const index = code === 'HOOK_CALLBACKS_MISSING' ? undefined : callbackIndex;
  return {
    event,
    ...(index !== undefined ? { callbackIndex: index } : {}),
    code,
    name: error.name,
    message: clipErrorText(error.message),
  };
}

/**
 * The one log line of a failed hook dispatch (the worker logs it at WARN through Temporal's
 * logger): event, callback, agent, session, code and message on one line, and the same as
 * fields in `meta`.
 *
 * @param record How the dispatch failed.
 * @param where The agent and session (and, for tool events, the tool call) it belongs to.
 */
export function describeHookFailure(
  record: HookErrorRecord,
  where: { agentName: string; sessionId: string; toolName?: string; toolUseId?: string },
): { message: string; meta: Record<string, unknown> } {
  const callback =
    record.callbackIndex !== undefined ? ` callback #${record.callbackIndex + 1}` : '';
  const tool = where.toolName !== undefined ? ` (tool ${where.toolName})` : '';
  // One line, whatever the message holds; the whole (cut) message is in `meta`.
  const text = cutPrefix(record.message.replace(/\s*\n\s*/g, ' '), 1000);
  return {
    message:
      `Hook ${record.event}${callback}${tool} failed in session '${where.sessionId}' of agent ` +
      `'${where.agentName}': ${record.code}: ${text}`,
    meta: {
      event: record.event,
      ...(record.callbackIndex !== undefined ? { callbackIndex: record.callbackIndex } : {}),
      agentName: where.agentName,
      sessionId: where.sessionId,
      ...(where.toolName !== undefined ? { toolName: where.toolName } : {}),
      ...(where.toolUseId !== undefined ? { toolUseId: where.toolUseId } : {}),
      code: record.code,
      errorName: record.name,
      errorMessage: record.message,
    },
  };
}

/**
 * Longest error message or stack kept, characters: a failure's message is not a payload, so
 * the payload store cannot take it, and Temporal refuses a failure over 2 MiB.
 */
export const MAX_ERROR_TEXT_CHARS = 32_768;

/** The message of a thrown value: an Error's `message`, anything else as a string. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `error` and the `cause`s it chains (an Error's `cause`, then that one's, ...), at most 8
 * links: how the clients find what a wrapped Temporal or gRPC error says underneath.
 */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let e: unknown = error;
    e !== undefined && e !== null && chain.length < 8;
    e = e instanceof Error ? e.cause : undefined
  ) {
    chain.push(e);
  }
  return chain;
}

/**
 * `text` cut to `MAX_ERROR_TEXT_CHARS` (32,768) UTF-16 code units (never inside a character)
 * with a marker saying how long it was.
 */
export function clipErrorText(text: string): string {
  if (text.length <= MAX_ERROR_TEXT_CHARS) return text;
  return `${cutPrefix(text, MAX_ERROR_TEXT_CHARS)}\n[... truncated: ${text.length} characters in all ...]`;
}

/** Turn any thrown value into a {@link SerializedError}, its texts cut at `MAX_ERROR_TEXT_CHARS` (32,768). */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const e = error as Error & Partial<SerializedError>;
    const out: SerializedError = { name: clipErrorText(e.name), message: clipErrorText(e.message) };
    if (typeof e.code === 'string') out.code = e.code;
    if (e.event !== undefined) out.event = e.event;
    if (typeof e.callbackIndex === 'number') out.callbackIndex = e.callbackIndex;
    if (typeof e.timeoutMs === 'number') out.timeoutMs = e.timeoutMs;
    if (typeof e.sessionId === 'string') out.sessionId = e.sessionId;
    if (e.code === 'MODEL_ERROR') {
      if (typeof e.retryable === 'boolean') out.retryable = e.retryable;
      if (typeof e.statusCode === 'number') out.statusCode = e.statusCode;
      if (typeof e.provider === 'string') out.provider = clipErrorText(e.provider);
      if (typeof e.model === 'string') out.model = clipErrorText(e.model);
    }
    if (e.code === 'MCP_SERVER_UNAVAILABLE' && typeof e.server === 'string') out.server = e.server;
    if (e.stack) out.stack = clipErrorText(e.stack);
    return out;
  }
  if (typeof error === 'string') return { name: 'Error', message: clipErrorText(error) };
  let message: string;
  try {
    message = JSON.stringify(error) ?? String(error);
  } catch {
    message = String(error);
  }
  return { name: 'Error', message: clipErrorText(message) };
}

/** A serialized `MODEL_ERROR` rebuilt: a `ProviderError` when it was one, else a `ModelError`. */
function modelErrorOf(s: SerializedError): ModelError {
  const details: ModelErrorDetails = {};
  if (typeof s.retryable === 'boolean') details.retryable = s.retryable;
  if (typeof s.statusCode === 'number') details.statusCode = s.statusCode;
  if (typeof s.provider === 'string') details.provider = s.provider;
  if (typeof s.model === 'string') details.model = s.model;
  return s.name === 'ProviderError' && typeof s.retryable === 'boolean'
    ? new ProviderError(s.message, { ...details, retryable: s.retryable })
    : new ModelError(s.message, details);
}

/** Rebuild an error from its serialized form, as an instance of our classes where it was one. */
export function deserializeError(s: SerializedError): Error {
  let error: Error;
  const hookDetails = { event: s.event, callbackIndex: s.callbackIndex };
  switch (s.code) {
    case 'HOOK_TIMEOUT':
      error = s.event
        ? new HookTimeoutError(s.event, s.timeoutMs ?? 0)
        : new HookError('HOOK_TIMEOUT', s.message);
      break;
    case 'HOOK_OUTPUT_INVALID':
    case 'HOOK_CALLBACK_FAILED':
    case 'HOOK_ABORTED':
    case 'HOOK_CLEANUP_PENDING':
    case 'HOOK_WORKER_LOST':
    case 'HOOK_CALLBACKS_MISSING':
    case 'PROMPT_REJECTED':
    case 'TASK_FAILED':
    case 'SESSION_START_FAILED':
      error = new HookError(s.code, s.message, hookDetails);
      break;
    case 'WORKER_VERSION_MISMATCH':
    case 'VERSION_FINGERPRINT_MISMATCH':
      error = s.event
        ? new HookError(s.code, s.message, hookDetails)
        : new EngineError(s.code, s.message);
      break;
    case 'CONFIG_INVALID':
      error = new ConfigError(s.message);
      break;
    case 'PERMISSION_REQUEST_NOT_FOUND':
    case 'PERMISSION_DIGEST_MISMATCH':
    case 'PERMISSION_DIGEST_REQUIRED':
    case 'SUBAGENT_SESSION':
      error = new AgentSdkError(s.code, s.message);
      break;
    case 'SESSION_NOT_FOUND':
      error = new SessionNotFoundError(s.sessionId ?? '');
      error.message = s.message;
      break;
    case 'SESSION_CLOSED':
      error = new SessionClosedError(s.sessionId ?? '', s.message);
      break;
    case 'TEMPORAL_CLI_UNAVAILABLE':
    case 'TEMPORAL_SERVER_START_FAILED':
    case 'TEMPORAL_TEST_SERVER_UNAVAILABLE':
    case 'ENGINE_ERROR':
    case 'TEMPORAL_UNREACHABLE':
    case 'NAMESPACE_NOT_FOUND':
    case 'WORKER_UNAVAILABLE':
      error = new EngineError(s.code, s.message);
      break;
    case 'MODEL_ERROR':
      error = modelErrorOf(s);
      break;
    case 'TOOL_ERROR':
      error = new ToolError(s.message);
      break;
    case 'MCP_SERVER_UNAVAILABLE':
      error = new McpServerError(s.server ?? '', s.message);
      break;
    default:
      error = new Error(s.message);
      error.name = s.name;
      if (s.code) (error as Error & { code?: string }).code = s.code;
      // Where it came from, for errors a callback threw: which event, which callback.
      if (s.event !== undefined) (error as Error & { event?: HookEvent }).event = s.event;
      if (s.callbackIndex !== undefined) {
        (error as Error & { callbackIndex?: number }).callbackIndex = s.callbackIndex;
      }
  }
  if (s.stack) error.stack = s.stack;
  return error;
}
