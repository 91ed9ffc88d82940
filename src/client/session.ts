/**
 * A handle on one durable session. Every method is a workflow Update or Query, so any
 * process that knows the session id can drive it.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { ConfigError, SessionClosedError } from '../common/errors.js';
import {
  Updates,
  type CloseResult,
  type SessionDescription,
  type UpgradeAnswer,
} from '../common/messages.js';
import type { TimelineEntry } from '../common/workflow-io.js';
import { capsProblems, type BudgetCaps, type BudgetStatus } from '../common/budgets.js';
import { upgradeSession } from './upgrade.js';
import type { ConversationMessage } from '../common/conversation.js';
import type { JsonObject } from '../common/json.js';
import type { PendingPermission } from '../common/permission.js';
import type { Prompt } from '../common/types.js';
import type { PayloadStore } from '../payloads/store.js';
import type { ClientCalls } from './client-calls.js';
import type { StreamTransport } from '../stream/transport.js';
import type { StreamedEvent } from '../stream/events.js';
import {
  errorEventOf,
  finishEventOf,
  readStream,
  sendCall,
  type ResumeOptions,
  type SendCall,
} from '../stream/send-call.js';
import { SpanAttributes } from '../tracing/spans.js';
import type { SpanAttributeValues, SpanRunner } from '../tracing/options.js';
import type { SendOptions, SendResponse } from './send-response.js';
import { approveRequest, denyRequest, pendingPermissionsOf } from './session-permissions.js';
import {
  describeSession,
  readPayloadText,
  sessionConversation,
  sessionTimeline,
  type SessionRef,
} from './session-reads.js';
import { abortPrompt, sendPrompt } from './session-send.js';
import {
  sessionTermination,
  sessionUpdate,
  toSdkError,
  type UpdateOptions,
} from './update-calls.js';

/** A durable session. Get one from `agent.createSession()` or `agent.session(id)`. */
export class Session {
  /** The session's id. */
  readonly id: string;
  readonly #handle: WorkflowHandle;
  /** What the helper modules read and update the session through. */
  readonly #ref: SessionRef;
  readonly #onClosed: (() => void) | undefined;
  readonly #streams: StreamTransport | undefined;
  readonly #spans: SpanRunner | undefined;

  /** @internal use `createSession` / `session(id)`. */
  constructor(
    id: string,
    handle: WorkflowHandle,
    payloadStore?: PayloadStore,
    calls?: ClientCalls,
    onClosed?: () => void,
    streams?: StreamTransport,
    spans?: SpanRunner,
  ) {
    this.id = id;
    this.#handle = handle;
    this.#ref = { sessionId: id, handle, calls, payloadStore };
    this.#onClosed = onClosed;
    this.#streams = streams;
    this.#spans = spans;
  }

  /** The workflow id backing this session. */
  get workflowId(): string {
    return this.#handle.workflowId;
  }

  /**
   * Send a prompt: UserPromptSubmit, the agent loop, then TaskCompleted. Prompts of one
   * session run one at a time. The sends one client makes to one session (through this
   * handle or any other of the same client) run in the order `send()` was called, awaited
   * or not: each is issued once the workflow has accepted the one before it, so they queue
   * in the workflow, where abort and close reach them. Sends from different clients run in
   * the order the workflow accepts them.
   *
   * @returns the response, to await as a promise; a prompt aborted while it runs (or waits)
   *   resolves with status `aborted`. A `signal` already aborted when `send()` is called
   *   rejects at once with its reason, and nothing runs. The same object streams the send
   *   live: `textStream()` (the model's text as it comes) and `stream()` (every event:
   *   text deltas, hook dispatches, tool starts and ends, permission checks, then `finish`
   *   or `error`), through `advanced.stream`'s transport; see {@link SendStream} (reading
   *   it throws a `ConfigError` when the transport is the in-memory default and no worker
   *   of the agent runs in this process).
   * @throws {HookError} when a hook rejects or fails the prompt (`HOOK_ABORTED`,
   *   `HOOK_TIMEOUT`, `HOOK_CLEANUP_PENDING`, ...) or the error a callback threw; the
   *   session stays usable.
   * @throws {SessionClosedError} after `close()` (or an idle timeout, a cancellation; after
   *   a termination its message says `was terminated` and gives the reason).
   * @throws {SessionNotFoundError} when the session does not exist.
   * @throws {EngineError} when this handle's client was closed while the call was in flight.
   * @throws {TypeError} when `prompt` is not a string or an array of text and image parts
   *   (naming what is wrong), before anything is sent.
   * @throws {ConfigError} when the prompt is over 1,048,576 bytes of JSON.
   */
  send(prompt: Prompt, options: SendOptions = {}): SendCall<SendResponse> {
    const requestId = options.requestId ?? randomUUID();
    const key = { sessionId: this.id, requestId };
    const streams = this.#streams;
    // The send's stream ends with how it ended, published by the process that sent it.
    const response = this.#traced(
      'send',
      { [SpanAttributes.requestId]: requestId },
      async (annotate) => {
        try {
          const sent = await sendPrompt(this.#ref, prompt, options, requestId);
          annotate({
            [SpanAttributes.sendStatus]: sent.result.status,
            [SpanAttributes.sendToolCalls]: sent.result.toolCalls.length,
          });
          streams?.append(key, finishEventOf(sent.result));
          return sent.response;
        } catch (error) {
          streams?.append(key, errorEventOf(error));
          throw error;
        }
      },
    );
    return sendCall(response, streams, key);
  }

  /** `fn` in a span `name` of this session when tracing is on, else `fn` alone. */
  #traced<T>(
    name: string,
    attributes: SpanAttributeValues,
    fn: (annotate: (attributes: SpanAttributeValues) => void) => Promise<T>,
  ): Promise<T> {
    if (!this.#spans) return fn(() => undefined);
    return this.#spans(name, { [SpanAttributes.sessionId]: this.id, ...attributes }, fn);
  }

  /**
   * The live stream of the send `requestId` of this session, from its start or after the
   * entry id `options.after` (the `id` of the last event a reader saw: a reader that
   * reconnects with it gets the rest, nothing lost or doubled, within the transport's
   * retention). Ends after the send's final event (`finish` or `error`) or when the signal
   * aborts. Works in any process whose agent shares the transport of the workers
   * (`advanced.stream`); a send whose sender died before it published the final event
   * streams until the signal aborts.
   *
   * @throws {ConfigError} when streaming is off (`advanced.stream: false`); when iterated,
   *   when the transport is the in-memory one (the default) and no worker of the agent runs
   *   in this process (its stream would stay empty: use `redisStreams` of
   *   `durable-agent-sdk/stream`).
   */
  stream(requestId: string, options: ResumeOptions = {}): AsyncIterable<StreamedEvent> {
    const streams = this.#streams;
    if (!streams) {
      throw new ConfigError(
        'session.stream(): streaming is off for this agent (advanced.stream: false)',
      );
    }
    if (typeof requestId !== 'string' || requestId === '') {
      throw new ConfigError('session.stream(): requestId must be the non-empty id of a send');
    }
    return readStream(streams, { sessionId: this.id, requestId }, options);
  }

  /**
   * Abort the prompt running now: its hook callback's `abortSignal` fires with `reason`, its
   * model step or tool is cancelled, and its `send()` resolves with status `aborted`. The
   * session stays usable. Sends this client issued before the call reach the session first
   * (an `abort()` right after a `send()` stops that send); sends issued after it wait until
   * it has answered.
   *
   * @param reason handed to callbacks as `abortSignal.reason`. @default an `AbortError`
   * @returns once the prompt has stopped: whether it ended as aborted (false when nothing
   *   ran, or the prompt finished before the abort reached it).
   */
  async abort(reason?: unknown): Promise<boolean> {
    return abortPrompt(this.#ref, reason, undefined);
  }

  /**
   * Close the session: stop the running prompt (its `send()` resolves `aborted`), refuse the
   * queued ones (`SessionClosedError`), then run SessionEnd once with `reason: 'other'`.
   * A refused close leaves the session open and usable.
   *
   * @returns `{ closedNow: true, sessionEndRan }` when this call closed it; `closedNow: false`
   *   when it was already closed (nothing ran): after an earlier `close()`, an idle timeout
   *   or a cancellation, and for a `close()` that overlapped the one that closed it. A
   *   session terminated from outside (`temporal workflow terminate`) answers
   *   `{ closedNow: false, sessionEndRan: false, terminated: { reason, at } }`: termination
   *   runs no SessionEnd.
   * @throws {HookError} when SessionEnd failed or timed out (concurrent calls share that
   *   rejection); calling `close()` again closes the session without calling SessionEnd
   *   again. `HOOK_CLEANUP_PENDING` while a cancelled callback has not settled.
   */
  async close(): Promise<CloseResult> {
    return this.#traced('session.close', {}, async () => {
      let result: CloseResult;
      try {
        result = await this.#update(Updates.close, []);
      } catch (error) {
        if (!(error instanceof SessionClosedError)) throw error;
        const terminated = await sessionTermination(this.#handle);
        result = { closedNow: false, sessionEndRan: false, ...(terminated ? { terminated } : {}) };
      }
      // Closed: this process's session hooks and permission function are not needed again.
      this.#onClosed?.();
      return result;
    });
  }

  /**
   * Move the session's activities (hooks, model steps, tools) to the workers of another
   * task queue.
   * @throws {HookError} `HOOK_CLEANUP_PENDING` while a cancelled callback has not settled.
   * @throws {ConfigError} when `taskQueue` is empty or no worker polls it.
   */
  async handoff(options: { taskQueue: string }): Promise<SessionDescription> {
    const taskQueue = options?.taskQueue;
    if (typeof taskQueue !== 'string' || taskQueue === '') {
      throw new ConfigError('handoff: taskQueue must be a non-empty string');
    }
    // Refuse a queue nobody serves: the session's next hook would wait for a worker forever.
    const client = this.#handle.client;
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: ACTIVITY_TASK_QUEUE,
    });
    if (!pollers || pollers.length === 0) {
      throw new ConfigError(
        `handoff: no worker polls task queue '${taskQueue}'; start its workers first`,
      );
    }
    return this.#update(Updates.handoff, [{ taskQueue }]);
  }

  /**
   * Move the session to another version of its agent: the only way a session changes the
   * definition that decides for it (continue-as-new keeps its version). The move waits for
   * the prompt in flight (a pending approval included) and those queued before it, holds the
   * session's turn, re-pins it to `<agent name>.<toVersion>` with Temporal
   * (UpdateWorkflowExecutionOptions, its versioning override; with Worker Deployments on),
   * takes the fingerprint of the definition a worker of `toVersion` runs, and records the
   * move (`describe().upgrades`, the history's `upgrade` Update, the timeline's `upgrades`):
   * dispatches before it carry the old version, later ones the new.
   * @param toVersion the version to move to. @default the Worker Deployment's current version
   *   (required with `advanced.temporal.versioning: 'off'`)
   * The turn is held no longer than `options.holdMs` for this client: if it dies between
   * taking the turn and finishing, the session finishes the move itself when Temporal
   * re-pinned it already, else gives the turn back and records the move in
   * `describe().abandonedUpgrades`.
   * @param options.identity who asks, recorded with the move. @default the client's Temporal identity
   * @param options.holdMs how long the session holds its turn for this client's finish, ms
   *   (a positive integer). @default 30000 (`DEFAULTS.upgradeHoldMs`)
   * @returns the version the session runs now, and the recorded move (absent when it ran
   *   `toVersion` already).
   * @throws {ConfigError} for an invalid `toVersion` or `holdMs`, no current version to
   *   default to, or no worker of `toVersion` polling the session's task queue (the error
   *   names the versions there are; with versioning off, known from the pollers' identities).
   * @throws {SessionClosedError} when the session is closed.
   * @throws {HookError} `HOOK_CLEANUP_PENDING` while a cancelled callback has not settled.
   * @throws {EngineError} `WORKER_VERSION_MISMATCH` when no worker of `toVersion` answered within 60 s.
   */
  async upgrade(
    toVersion?: string,
    options: { identity?: string; holdMs?: number } = {},
  ): Promise<UpgradeAnswer> {
    const by = options.identity ?? this.#handle.client.options.identity ?? 'unknown';
    try {
      return await upgradeSession(
        this.#handle,
        this.id,
        toVersion,
        by,
        (request) =>
          this.#update(Updates.upgrade, [request], {
            updateId: `upgrade-${request.phase}-${request.toVersion}-${randomUUID()}`,
          }),
        options.holdMs,
      );
    } catch (error) {
      if (error instanceof ConfigError || error instanceof SessionClosedError) throw error;
      throw toSdkError(error, this.id);
    }
  }

  /**
   * Set caps of the session's budget (`advanced.budgets`, the session's `budgets`): each cap
   * given replaces the one in force, the others stay. Recorded in the session's history (the
   * `raiseBudget` Update) with `identity`, and in `describe().budget.raises`. A prompt that
   * ended `budget_exceeded` stays ended; the next `send()` runs under the new caps.
   * @param caps the caps to set, as `advanced.budgets` takes them.
   * @param options.identity who raises it. @default the client's Temporal identity
   * @returns the budget as it stands after the raise.
   * @throws {ConfigError} for a negative or non-integer cap (naming it), or a session without
   *   a budget, before anything is recorded.
   * @throws {SessionClosedError} when the session is closed.
   * @example
   * ```ts
   * const status = await session.raiseBudget({ totalTokens: 500_000 }, { identity: 'alice@ops' });
   * ```
   */
  async raiseBudget(caps: BudgetCaps, options: { identity?: string } = {}): Promise<BudgetStatus> {
    const problems = capsProblems(caps, 'caps');
    if (problems.length > 0) throw new ConfigError(`Invalid raiseBudget: ${problems.join('; ')}`);
    const identity = options.identity ?? this.#handle.client.options.identity ?? 'unknown';
    return this.#update(Updates.raiseBudget, [{ caps, identity }], {
      updateId: `raise-budget-${randomUUID()}`,
    });
  }

  /**
   * Permission requests waiting for a person (`ask`) in this session and in the sub-agents
   * it runs (theirs too, 4 levels down at most), oldest first. Each names the session that
   * asks (`sessionId`) and its path (`agentPath`: `main`, `main/writer`); answer any of them
   * through this handle ({@link Session.approve}, {@link Session.deny}). `[]` once the
   * session is closed.
   * @throws {EngineError} `WORKER_UNAVAILABLE` when no worker answers (only a worker of the
   *   agent can list them).
   */
  async pendingPermissions(): Promise<PendingPermission[]> {
    return pendingPermissionsOf(this.#ref);
  }

  /**
   * Allow a pending request; the tool runs once, with `updatedInput` when given. The send's
   * stream gets a `permission-decided` event by `person`, with this client's `identity`. A
   * request of a sub-agent this session runs (its id is `<sub-agent session id>#<uuid>`, as
   * {@link Session.pendingPermissions} lists it) is answered in the sub-agent's session, so
   * its history records the answer and who gave it.
   * @throws {AgentSdkError} `PERMISSION_REQUEST_NOT_FOUND` when no such request waits; the
   *   message says how it ended when the session's current run saw it (`was already approved
   *   by alice@ops at 2026-12-01T18:20:00Z`, `expired at its deadline`, `was cancelled`), or
   *   that the answer to it is being applied.
   * @param options.updatedInput - the input the tool runs with instead (approved with edit:
   *   the stream's event carries both approval digests and who).
   * @param options.digest - the approval digest the person was shown
   *   (`PendingPermission.digest`, whole or its first 12 hex digits): binds the answer to that
   *   call. Without it the answer is accepted unbound (`bound: false` on its event).
   * @throws {AgentSdkError} `PERMISSION_DIGEST_MISMATCH` when `digest` is not the request's
   *   (the call is not the one the person was shown); the message names what changed (the
   *   input by key, the agent version). Nothing is decided: the request still waits.
   * @throws {TypeError} when `updatedInput` is given and is not a plain object (a tool's input
   *   is one), before anything is sent; when `digest` is not 12 to 64 lowercase hex digits.
   * @example
   * ```ts
   * const [request] = await session.pendingPermissions();
   * // ...show the person request.input and request.digest.slice(0, 12)...
   * await session.approve(request.requestId, { digest: request.digest });
   * ```
   */
  async approve(
    requestId: string,
    options: { updatedInput?: JsonObject; digest?: string } = {},
  ): Promise<void> {
    await approveRequest(this.#ref, requestId, options);
  }

  /**
   * Deny a pending request; the model gets `message` as the tool's error result.
   * `interrupt: true` also stops the running prompt (status `interrupted`; in a sub-agent,
   * its task). The send's stream gets a `permission-decided` event by `person`, with this
   * client's `identity`. A sub-agent's request is answered in its session, as `approve` does.
   * @throws {AgentSdkError} `PERMISSION_REQUEST_NOT_FOUND` when no such request waits; the
   *   message says how it ended when the session's current run saw it (`was already approved
   *   by alice@ops at 2026-12-01T18:20:00Z`, `expired at its deadline`, `was cancelled`), or
   *   that the answer to it is being applied.
   * @throws {AgentSdkError} `PERMISSION_DIGEST_MISMATCH` when `options.digest` (the approval
   *   digest the person was shown, as {@link Session.approve} takes it) is not the request's.
   */
  async deny(
    requestId: string,
    options: { message?: string; interrupt?: boolean; digest?: string } = {},
  ): Promise<void> {
    await denyRequest(this.#ref, requestId, options);
  }

  /**
   * The whole transcript, every message of every run of the session, in order (the model's
   * context may hold fewer: see `maxContextTokens`). Earlier runs are read from the payload
   * store, the current one by query.
   * @throws {PayloadNotFoundError} when an earlier run's archive is not in this process's store.
   */
  async conversation(): Promise<ConversationMessage[]> {
    return sessionConversation(this.#ref);
  }

  /**
   * Every hook dispatch so far, in order, across runs; works on open and closed sessions.
   *
   * @param options.subagents also the dispatches of the sub-agents (`advanced.subagents`) its
   *   current run's `Task` calls started, and of theirs down to 4 levels, each with the
   *   `sessionId` and `agentPath` of the sub-agent it ran in, merged by `startedAt` (a
   *   sub-agent's entries fall between its `Task` call's PreToolUse and PostToolUse). Each
   *   sub-agent is a query its worker answers. @default false
   */
  async timeline(options: { subagents?: boolean } = {}): Promise<TimelineEntry[]> {
    return sessionTimeline(this.#ref, options);
  }

  /**
   * The full value behind a payload reference (`sha256:...`), as UTF-8 text: a tool output
   * or hook output that was cut for the model names one in its marker, and a tool call's
   * `outputRef` holds one.
   * @throws {PayloadNotFoundError} when the store has no such value.
   * @throws {ConfigError} when this handle has no payload store (a CLI handle).
   */
  async readPayload(ref: string): Promise<string> {
    return readPayloadText(this.#ref, ref);
  }

  /**
   * The session's state: status, task queue, SessionEnd marker, pending cleanups; for a
   * session terminated from outside, `status: 'closed'` with `terminated: { reason, at }`.
   */
  async describe(): Promise<SessionDescription> {
    return describeSession(this.#ref);
  }

  /** Run an Update of this session (see {@link sessionUpdate}). */
  #update<T, A extends unknown[]>(
    definition: UpdateDefinition<T, A>,
    args: NoInfer<A>,
    options: UpdateOptions<T> = {},
  ): Promise<T> {
    return sessionUpdate(this.#ref, definition, args, options);
  }
}

/** `TASK_QUEUE_TYPE_ACTIVITY` of Temporal's API. */
const ACTIVITY_TASK_QUEUE = 2;
