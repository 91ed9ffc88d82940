/**
 * The client side of an agent: starts, attaches to and lists sessions, without running
 * hooks (a front end of a worker fleet).
 *
 * @module
 */
import {
  inlineDispatchEvents,
  localDispatchEvents,
  type HookDispatchMode,
} from '../common/hook-dispatch-mode.js';
import { randomUUID } from 'node:crypto';
import proto from '@temporalio/proto';
import { optionalTsToDate } from '@temporalio/common/lib/time.js';
import {
  Client,
  type Connection,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  ConfigError,
  EngineError,
  HookError,
  SessionClosedError,
  SessionNotFoundError,
  deserializeError,
  messageOf,
} from '../common/errors.js';
import { HookEvent } from '../common/hook-events.js';
import {
  SESSION_WORKFLOW,
  Updates,
  sessionIdCandidates,
  sessionIdOfWorkflowId,
  sessionWorkflowId,
  type SessionWorkflow,
  type SessionWorkflowInput,
  type SessionWorkflowResult,
} from '../common/protocol.js';
import {
  hookCountsOf,
  validateSessionOptions,
  type ResolvedAgentOptions,
  type SessionOptions,
} from '../definition/options.js';
import type { AgentRegistry } from '../definition/registry.js';
import { agentPayloadsOf, type AgentPayloads } from '../payloads/data-converter.js';
import { ClientCalls } from './client-calls.js';
import { Session } from './session.js';
import {
  isTransientTaskFailure,
  retryingUpdate,
  TASK_FAILURE_WAIT_MS,
  toSdkError,
} from './update-calls.js';
import { decodeHistoryPayloads } from '../history/decode.js';
import { connectTemporalClient } from '../temporal/connection.js';
import { resolveVersioning, type VersioningMode } from '../temporal/versioning.js';
import { inSpan, SpanAttributes } from '../tracing/spans.js';
import { sharedStreams } from '../stream/memory.js';
import { acquireTracing, type AgentTracing } from '../tracing/tracing.js';
import { isMissingSearchAttribute, sessionSearchAttributes } from './search-attributes.js';
import {
  AGENT_NAME_KEY,
  LAST_DECISION_KEY,
  PENDING_APPROVALS_KEY,
  STATUS_KEY,
  searchAttributeCreateCommand,
  type SessionSearchStatus,
} from '../common/search-attributes.js';
import type { Payload } from '@temporalio/common';
import { sessionListStatus, sessionStatusQuery, type SessionListStatus } from './session-status.js';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';

/** One row of {@link AgentClient.listSessions}. */
export interface SessionSummary {
  sessionId: string;
  workflowId: string;
  /** Temporal's execution status: `RUNNING`, `COMPLETED`, `FAILED`, `CANCELED`, `TERMINATED`, ... */
  status: string;
  startTime: Date;
  closeTime: Date | undefined;
  /** The agent's name (search attribute `DurableAgentName`; absent on a server without them). */
  agentName?: string;
  /**
   * The session's own status (search attribute `DurableAgentStatus`), e.g.
   * `awaiting_approval`, as the workflow last set it: a workflow terminated, timed out or
   * reset from outside keeps its last value (often `running`). See `sessionStatus`.
   */
  agentStatus?: SessionSearchStatus;
  /**
   * The session's status from both: `agentStatus` while the workflow execution runs,
   * `closed` once it completed, else how Temporal ended it (`terminated`, `timed_out`,
   * `failed`, `canceled`, `continued_as_new`). Absent for a running session on a server
   * without the session search attributes.
   */
  sessionStatus?: SessionListStatus;
  /** Permission requests waiting for a person (`DurableAgentPendingApprovals`). */
  pendingApprovals?: number;
  /** The last hook outcome or permission answer (`DurableAgentLastDecision`). */
  lastDecision?: string;
}

/** Which sessions {@link listSessionSummaries} lists, by their search attributes. */
export interface SessionFilter {
  /**
   * Only sessions whose `sessionStatus` is this: a status of a running session (`running`,
   * `awaiting_approval`, `cleaning_up`, `idle`) matches `DurableAgentStatus` of running
   * workflow executions only (`ExecutionStatus = 'Running' AND DurableAgentStatus =
   * 'running'`), `closed` completed ones, `terminated` (and the other end statuses)
   * Temporal's `ExecutionStatus`.
   */
  status?: SessionListStatus;
  /** Only sessions of the agent of this name (`DurableAgentName`). */
  agentName?: string;
  /** Only sessions started on this task queue (Temporal's own `TaskQueue` attribute). */
  taskQueue?: string;
}

/** Starts and drives sessions of one agent definition. */
export interface AgentClient {
  /** The Temporal client underneath, for anything this API does not cover. */
  readonly temporal: Client;
  /**
   * Start a session (or attach to the running one with the same `sessionId`) and wait until
   * SessionStart has run. A session that never opened (its SessionStart aborted, threw,
   * timed out or lost its worker) can be created again with the same `sessionId`:
   * SessionStart then runs again, in a new run of the session's workflow. A first workflow
   * task that failed (its worker died or refused it) is waited out as any Update of the
   * session waits: for about 40 s, until a worker runs the task. Attaching to an open
   * session (a `sessionId` whose session runs) does not depend on this client's definition:
   * the session keeps the version it was started with, so a client-only definition (no
   * hooks, another build) attaches as `session()` does; only a new session is pinned to this
   * client's version. A given `sessionId` costs one DescribeWorkflowExecution first.
   * @throws {ConfigError} for bad options, or session hooks without an in-process worker; for
   *   a new session only: with Worker Deployments, when this client's version is not a
   *   version of the agent's deployment, or no worker of it polls the task queue within 15 s;
   *   unversioned and client-only, when every worker listed on the task queue is versioned
   *   (see `advanced.temporal.versioning`).
   * @throws {HookError} `SESSION_START_FAILED` when SessionStart aborted or failed: `message`
   *   is the abort's reason, or `SessionStart failed: ...` with the error underneath as
   *   `cause` (e.g. a `HookError` `HOOK_WORKER_LOST` when the worker running the callback
   *   died, `HOOK_TIMEOUT`, or what the callback threw).
   * @throws {SessionClosedError} when a session with this id was opened and is closed
   *   (closed, idle-timed out, cancelled or terminated).
   * @throws {EngineError} `ENGINE_ERROR` when the session's workflow task kept failing all
   *   that time: the message names its last recorded failure; the workflow still runs.
   * @throws {EngineError} `ENGINE_ERROR` when the Temporal server refused the start (nothing
   *   started): the message names its gRPC status and text (e.g. `INVALID_ARGUMENT: WorkflowId
   *   exceeds length limit`), the `ServiceError` is `cause`. A refusal for the session search
   *   attributes is not one: the start is sent again without them (one WARN line a client).
   * @throws {EngineError} `WORKER_UNAVAILABLE` when no worker took the session's first
   *   workflow task within 40 s (no worker of this agent, or of this version with Worker
   *   Deployments, serves the task queue: its workers stopped, or none started yet). The
   *   session's workflow, which no worker had run, is terminated: nothing is left behind.
   */
  createSession(options?: SessionOptions): Promise<Session>;
  /**
   * A handle on an existing session, from any process. Takes the session id or its workflow
   * id, `session-<id>`, as the Web UI shows it (a session whose own id starts with
   * `session-` is found either way).
   * @throws {SessionNotFoundError} when no session has this id.
   */
  session(sessionIdOrWorkflowId: string): Promise<Session>;
  /**
   * Sessions of this namespace, newest first: at most `limit` (default 100), those in
   * `status` (see {@link SessionFilter.status}) and of the agent named `agentName` only.
   * @throws {ConfigError} for an unknown `status`; for `agentName` or a status of a running
   *   session on a server without the session search attributes (naming the commands that
   *   register them).
   */
  listSessions(options?: { limit?: number } & SessionFilter): Promise<SessionSummary[]>;
  /**
   * Close the connection (sessions stay as they are on the server). A `send()`, `close()`,
   * `abort()` or approval of this client's sessions still in flight ends with an
   * `EngineError` ("The client of session … was closed while its … call was in flight").
   * Each call runs under an abort signal of its own, so a client makes any number of calls
   * without piling up listeners.
   */
  close(): Promise<void>;
}

/** How long a session's start waits for a just-started worker of its version to register, ms. */
const PIN_WAIT_MS = 15_000;
/**
 * How long `createSession` waits for some worker to take a session's first workflow task, ms:
 * as long as any Update of a session waits out a failed workflow task.
 */
const FIRST_TASK_WAIT_MS = TASK_FAILURE_WAIT_MS;

/** Whether a listed worker polls as a Worker Deployment version (not unversioned). */
function versionedPoller(poller: proto.temporal.api.taskqueue.v1.IPollerInfo): boolean {
  return (
    poller.deploymentOptions?.workerVersioningMode ===
    proto.temporal.api.enums.v1.WorkerVersioningMode.WORKER_VERSIONING_MODE_VERSIONED
  );
}

/**
 * How long a client waits for its version to be listed by its Worker Deployment before it
 * refuses to start a session, ms: Temporal lists a worker's version about a second after the
 * worker starts polling, so a client created with its worker would otherwise be refused.
 */
const VERSION_LISTING_GRACE_MS = 5_000;

/** Whether `error` is Temporal's refusal to pin a workflow to a version its task queue lacks. */
function versionNotPresent(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (/Pinned version .* is not present in task queue/.test(e.message)) return true;
  }
  return false;
}

/** Build a client on an open connection. */
function createClientOn(
  connection: Connection,
  options: ResolvedAgentOptions,
  payloads: AgentPayloads,
  registry: AgentRegistry | undefined,
  tracing: AgentTracing | undefined,
  versioning: VersioningMode,
): AgentClient {
  const calls = new ClientCalls();
  // An in-memory transport reaches a worker of this process only: reading it without one throws.
  const streams = options.stream && sharedStreams(options.stream, options.name);
  const client = new Client({
    connection,
    namespace: options.temporal.namespace,
    dataConverter: payloads.dataConverter,
    interceptors: {
      ...options.temporal.interceptors.client,
      // Tells a send whether the workflow accepted it, so the next one may go (call order).
      workflow: [calls.interceptor(), ...(options.temporal.interceptors.client?.workflow ?? [])],
    },
  });

  const deployments = versioning === 'deployments';
  let served: Promise<void> | undefined;
  /**
   * With Worker Deployments, a client without a worker of its own version in this process
   * whose version is its fingerprint (no explicit `version`) checks once that the deployment
   * knows that version: a client built by another toolchain than its workers can print a
   * callback differently and compute another fingerprint, and a session pinned to a version
   * no worker runs would wait forever. A version the deployment does not list is asked for
   * again for {@link VERSION_LISTING_GRACE_MS} before the refusal (a worker started just now is
   * listed a little later). A deployment not created yet (no worker polled) passes:
   * Temporal then refuses to pin the session until a worker registers ({@link startPinned}).
   */
  function versionServed(): Promise<void> {
    const explicit = options.version !== options.fingerprint;
    if (explicit || registry?.versionsOf(options.name).has(options.version)) {
      return Promise.resolve();
    }
    /** The deployment's versions (build ids), or undefined when there is no such deployment. */
    const listed = async (): Promise<string[] | undefined> => {
      try {
        const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
          namespace: options.temporal.namespace,
          deploymentName: options.name,
        });
        return (workerDeploymentInfo?.versionSummaries ?? []).map(
          (v) => v.deploymentVersion?.buildId ?? '',
        );
      } catch {
        return undefined;
      }
    };
    served ??= (async () => {
      // A worker that has just started polling is listed about a second later: a version
      // still missing is asked again for VERSION_LISTING_GRACE_MS before it is refused.
      const deadline = Date.now() + VERSION_LISTING_GRACE_MS;
      let versions = await listed();
      while (versions && !versions.includes(options.version) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        versions = await listed();
      }
      if (!versions) return; // no such deployment yet
      if (!versions.includes(options.version)) {
        throw new ConfigError(
          `Agent '${options.name}' version '${options.version}' (this client's fingerprint of its ` +
            `definition) is not a version of Worker Deployment '${options.name}', which has ` +
            `${versions.map((v) => `'${v}'`).join(', ') || 'none'}: a session pinned to it would ` +
            `wait for a worker forever. A client built by another toolchain than its workers can ` +
            `compute another fingerprint; give the definition an explicit \`version\` on both sides.`,
        );
      }
    })();
    served.catch(() => (served = undefined));
    return served;
  }

  /** The workers Temporal lists on the session task queue (workflow tasks). */
  async function workflowPollers(): Promise<proto.temporal.api.taskqueue.v1.IPollerInfo[]> {
    const { pollers } = await client.workflowService.describeTaskQueue({
      namespace: options.temporal.namespace,
      taskQueue: { name: options.temporal.taskQueue },
      taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    return pollers ?? [];
  }

  let unpinnedChecked = false;
  /**
   * A client-only agent that does not pin, on a task queue every listed worker of which polls
   * as a Worker Deployment version: Temporal would give the session's tasks to unversioned
   * workers only, so it would wait forever. Refused at once instead. Asked until some worker
   * is listed (one DescribeTaskQueue a session until then), then never again.
   * @throws {ConfigError} naming the deployment versions and the setting.
   */
  async function unpinnedServed(): Promise<void> {
    if (deployments || registry || unpinnedChecked) return;
    const pollers = await workflowPollers().catch(() => undefined);
    if (!pollers || pollers.length === 0) return;
    if (pollers.some((p) => !versionedPoller(p))) {
      unpinnedChecked = true;
      return;
    }
    const versions = [
      ...new Set(
        pollers.map(
          (p) => `${p.deploymentOptions?.deploymentName}.${p.deploymentOptions?.buildId}`,
        ),
      ),
    ];
    throw new ConfigError(
      `Every worker of task queue '${options.temporal.taskQueue}' polls as a Worker Deployment ` +
        `version (${versions.map((v) => `'${v}'`).join(', ')}), but this client of agent ` +
        `'${options.name}' does not pin its sessions (advanced.temporal.versioning ` +
        `'${options.temporal.versioning}' came to 'off'): Temporal would give a session it ` +
        `starts to unversioned workers only, and it would wait forever. Give workers and ` +
        `clients the same advanced.temporal.versioning (the default 'auto' agrees on one server).`,
    );
  }

  /**
   * Temporal refuses to pin a new workflow to a version none of whose workers it has seen on
   * the task queue (FAILED_PRECONDITION). A worker that just started (this process's own, or a
   * fleet's in a deploy) registers within moments (about 1.1 s after it started, measured on
   * the shared 1.32 dev server): retry every 200 ms at most (a cheap refusal) for
   * {@link PIN_WAIT_MS}, then say what is missing.
   * @throws {ConfigError} when no worker of this version polls the task queue by then.
   */
  async function startPinned<T>(attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + PIN_WAIT_MS;
    for (let wait = 50; ; wait = Math.min(wait * 2, 200)) {
      try {
        return await attempt();
      } catch (error) {
        if (!deployments || !versionNotPresent(error)) throw error;
        if (Date.now() + wait > deadline) {
          const unversioned = (await workflowPollers().catch(() => [])).filter(
            (p) => !versionedPoller(p),
          ).length;
          throw new ConfigError(
            `No worker of agent '${options.name}' version '${options.version}' polls task queue ` +
              `'${options.temporal.taskQueue}' as a Worker Deployment version (Temporal refuses ` +
              `to pin a session to a version it has seen no worker of; this client routes by ` +
              `Worker Deployments, advanced.temporal.versioning '${options.temporal.versioning}')` +
              (unversioned > 0
                ? `: ${unversioned} worker(s) of the task queue poll unversioned (their ` +
                  `advanced.temporal.versioning came to 'off'); give workers and clients the ` +
                  `same versioning`
                : `: start a worker of this version first`) +
              `; a client built by another toolchain than its workers can compute another ` +
              `fingerprint: give the definition an explicit \`version\`.`,
            { cause: error },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /**
   * Called once {@link FIRST_TASK_WAIT_MS} after a session's start while its `ready` still
   * waits: if no worker has taken the session's first workflow task (its history still holds
   * only the start and that task's schedule), no worker of its routing serves the task queue
   * (its workers stopped or died, say, after a rollback). The session never ran anything: its
   * workflow is terminated, so the failed call leaves nothing behind, and `watch.unserved`
   * says why (which also ends the `ready` call). Never rejects.
   */
  async function failIfUnserved(
    live: WorkflowHandle,
    sessionId: string,
    watch: { settled: boolean; unserved: EngineError | undefined },
  ): Promise<void> {
    const taken = await live.describe().then(
      (d) => d.historyLength > 2 || d.status.name !== 'RUNNING',
      () => true, // unknown: leave it to `ready`
    );
    if (taken || watch.settled) return;
    const routing = deployments
      ? `no worker of agent '${options.name}' version '${options.version}' serves it`
      : `no unversioned worker of agent '${options.name}' serves it`;
    watch.unserved = new EngineError(
      'WORKER_UNAVAILABLE',
      `Session '${sessionId}' was not started: no worker took its first workflow task within ` +
        `${FIRST_TASK_WAIT_MS / 1000} s on task queue '${options.temporal.taskQueue}' (${routing}; ` +
        `its workers stopped or have not started). Its workflow ${live.workflowId}, which no ` +
        `worker had run, was terminated. Start a worker of this agent (createAgent or ` +
        `createAgentWorker) and create the session again.`,
    );
    await live
      .terminate(
        `createSession: no worker took the first workflow task within ${FIRST_TASK_WAIT_MS / 1000} s`,
      )
      .catch(() => undefined);
  }

  const searchAttributes = sessionSearchAttributes({
    namespace: options.temporal.namespace,
    agentName: options.name,
    version: options.version,
    logger: options.logger,
    logLevel: options.logLevel,
  });

  /**
   * Only when some event is local or inline, so other sessions keep the inputs they had
   * before these existed.
   */
  function localDispatchOf(agent: HookDispatchMode, session: HookDispatchMode | undefined) {
    const local = localDispatchEvents(agent, session);
    const inline = inlineDispatchEvents(agent, session);
    return {
      ...(local.length > 0 ? { localDispatch: local } : {}),
      ...(inline.length > 0 ? { inlineDispatch: inline } : {}),
    };
  }

  /** {@link startSession}, in a `session.create` span when tracing is on. */
  async function createSession(sessionOptions: SessionOptions = {}): Promise<Session> {
    if (!tracing) return startSession(sessionOptions);
    const given =
      typeof sessionOptions?.sessionId === 'string' ? sessionOptions.sessionId : undefined;
    return inSpan(
      tracing,
      'session.create',
      {
        [SpanAttributes.agentName]: options.name,
        [SpanAttributes.agentVersion]: options.version,
        ...(given !== undefined ? { [SpanAttributes.sessionId]: given } : {}),
      },
      async (span) => {
        const session = await startSession(sessionOptions);
        span.setAttribute(SpanAttributes.sessionId, session.id);
        return session;
      },
    );
  }

  async function startSession(sessionOptions: SessionOptions = {}): Promise<Session> {
    validateSessionOptions(sessionOptions);
    const sessionId = sessionOptions.sessionId ?? randomUUID();
    const workflowId = sessionWorkflowId(sessionId);
    // An open session already runs its own version: attaching to it pins nothing, so it does
    // not depend on this client's fingerprint (an operator tool, a client-only process of
    // another build, a client after a crash). Only a new session is checked and pinned.
    const existing =
      sessionOptions.sessionId !== undefined ? await sessionState(workflowId) : undefined;
    if (existing === 'closed') throw new SessionClosedError(sessionId);
    const attaching = existing === 'open';
    if (!attaching) {
      if (deployments) await versionServed();
      else await unpinnedServed();
    }
    if (sessionOptions.hooks && Object.keys(sessionOptions.hooks).length > 0) {
      if (!registry) {
        throw new ConfigError(
          'Session hooks need a worker in this process (createAgent); a client-only agent cannot run them',
        );
      }
      registry.setSessionHooks(sessionId, sessionOptions.hooks);
    }
    if (sessionOptions.permissionHandler) {
      if (!registry) {
        throw new ConfigError(
          'A session permissionHandler needs a worker in this process (createAgent); a client-only agent cannot run it',
        );
      }
      registry.setSessionPermission(sessionId, sessionOptions.permissionHandler);
    }
    const input: SessionWorkflowInput = {
      sessionId,
      agentName: options.name,
      // The definition the session runs, for good: every worker checks it before any task.
      version: options.version,
      fingerprint: options.fingerprint,
      manifest: options.manifest,
      hookCounts: hookCountsOf(options.hooks, sessionOptions.hooks),
      hookTimeoutMs: sessionOptions.hookTimeoutMs ?? options.hookTimeoutMs,
      sessionEndHookTimeoutMs:
        sessionOptions.sessionEndHookTimeoutMs ?? options.sessionEndHookTimeoutMs,
      maxTurns: sessionOptions.maxTurns ?? options.maxTurns,
      taskQueue: options.temporal.taskQueue,
      dispatchHeartbeatTimeoutMs: options.temporal.dispatchHeartbeatTimeoutMs,
      ...(options.temporal.modelHeartbeatTimeoutMs !== undefined
        ? { modelHeartbeatTimeoutMs: options.temporal.modelHeartbeatTimeoutMs }
        : {}),
      ...(options.temporal.toolHeartbeatTimeoutMs !== undefined
        ? { toolHeartbeatTimeoutMs: options.temporal.toolHeartbeatTimeoutMs }
        : {}),
      tools: options.tools.map((tool) => ({ name: tool.name, kind: tool.kind })),
      permission: sessionOptions.permissionHandler
        ? { handler: 'session' }
        : typeof options.permission === 'function'
          ? { handler: 'function' }
          : { preset: options.permission },
      permissionTimeoutMs: options.permissionTimeoutMs,
      toolTimeoutMs: options.toolTimeoutMs,
      modelTimeoutMs: options.modelTimeoutMs,
      maxContextTokens: options.maxContextTokens,
      // Only when set, so sessions keep the inputs (and histories) they had before it existed.
      ...(options.toolHookErrors === 'reject' ? { toolHookErrors: 'reject' as const } : {}),
      ...localDispatchOf(options.hookDispatch, sessionOptions.hookDispatch),
      turnStatus: options.temporal.turnStatus,
      ...(options.continueAsNewAfterPrompts !== undefined
        ? { continueAsNewAfterPrompts: options.continueAsNewAfterPrompts }
        : {}),
      ...((sessionOptions.idleTimeoutMs ?? options.idleTimeoutMs)
        ? { idleTimeoutMs: sessionOptions.idleTimeoutMs ?? options.idleTimeoutMs }
        : {}),
      ...(sessionOptions.resumeSessionId
        ? { isResume: true, resumeSessionId: sessionOptions.resumeSessionId }
        : {}),
    };
    const startOnce = (reuse: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE') => {
      const typedSearchAttributes = searchAttributes.initial();
      return client.workflow.start<SessionWorkflow>(SESSION_WORKFLOW, {
        workflowId,
        taskQueue: options.temporal.taskQueue,
        args: [input],
        workflowTaskTimeout: options.temporal.workflowTaskTimeoutMs,
        // A second start of the same session attaches instead of forking.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: reuse,
        memo: { sessionId, agentName: options.name, version: options.version },
        // Worker Deployments: the session is pinned to this definition's own version from its
        // first task, whatever the deployment's current version is (two definitions side by
        // side each get sessions of their own version). It moves only by session.upgrade().
        ...(deployments
          ? {
              versioningOverride: {
                pinnedTo: { deploymentName: options.name, buildId: options.version },
              },
            }
          : {}),
        // The workflow keeps status, approvals and decisions up to date when it starts with them.
        ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
      });
    };
    // A server without the search attributes refuses the start (nothing started): again without.
    // With Worker Deployments, a just-started worker of this version may not be registered yet.
    const start = (reuse: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE') =>
      startPinned(() =>
        startOnce(reuse).catch((error: unknown) => {
          if (!searchAttributes.refusedForMissing(error)) throw error;
          return startOnce(reuse);
        }),
      );
    try {
      try {
        if (!attaching) await start('REJECT_DUPLICATE');
      } catch (error) {
        // A closed session of this id: refused, unless it never opened (its SessionStart
        // failed). Then the id is free again, and a new run starts the session afresh.
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        if (!(await neverOpened(workflowId))) throw new SessionClosedError(sessionId);
        await start('ALLOW_DUPLICATE');
      }
    } catch (error) {
      registry?.removeSessionHooks(sessionId);
      if (error instanceof SessionClosedError || error instanceof ConfigError) throw error;
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        throw new SessionClosedError(sessionId);
      throw startRefused(error, sessionId);
    }
    // Attaching to a session that continued as new: `start` answers with the current run as
    // `firstExecutionRunId`, which updates cannot use. Follow the workflow id instead.
    const live = client.workflow.getHandle(workflowId);
    // The same retries as every Update of a session: a first workflow task that failed
    // transiently (its worker died, say) leaves the task in failed state until a worker
    // runs it again, and the server refuses `ready` meanwhile.
    const readyId = randomUUID();
    // A session no worker takes would keep `ready` waiting forever: see failIfUnserved().
    const watch = { settled: false, unserved: undefined as EngineError | undefined };
    const watching = setTimeout(
      () => void failIfUnserved(live, sessionId, watch),
      FIRST_TASK_WAIT_MS,
    ).unref();
    try {
      await retryingUpdate(
        () => live.executeUpdate(Updates.ready, { args: [], updateId: readyId }),
        {
          name: Updates.ready.name,
          sessionId,
          handle: live,
          calls,
        },
      ).finally(() => {
        watch.settled = true;
        clearTimeout(watching);
      });
    } catch (error) {
      if (watch.unserved) {
        registry?.removeSessionHooks(sessionId);
        throw watch.unserved;
      }
      if (error instanceof WorkflowUpdateFailedError) {
        registry?.removeSessionHooks(sessionId);
        throw startFailure(toSdkError(error, sessionId));
      }
      if (isTransientTaskFailure(error)) {
        registry?.removeSessionHooks(sessionId);
        throw await taskKeepsFailing(live, sessionId, payloads, error);
      }
      // The workflow may have completed with its start error before the update landed.
      const running = await live.describe().then(
        (d) => d.status.name === 'RUNNING',
        () => false,
      );
      const result = running
        ? undefined
        : ((await live.result().catch(() => undefined)) as SessionWorkflowResult | undefined);
      registry?.removeSessionHooks(sessionId);
      if (result?.startError) throw startFailure(deserializeError(result.startError));
      throw toSdkError(error, sessionId);
    }
    return new Session(
      sessionId,
      live,
      payloads.payloadStore,
      calls,
      () => registry?.removeSessionHooks(sessionId),
      streams,
      tracing?.run,
    );
  }

  /**
   * The newest run of `workflowId` as a `createSession` of its id sees it: `open` (running,
   * SessionStart run or still running), `closed` (it opened and ended), or `undefined` (no
   * such session, one that never opened, or unknown: the start then decides).
   */
  async function sessionState(workflowId: string): Promise<'open' | 'closed' | undefined> {
    // Only "not found" means no session: another failure (the server briefly unavailable)
    // must not send an attaching client of another definition into the new-session check.
    const status = await client.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        (d) => d.status.name,
        (error: unknown) => {
          if (error instanceof WorkflowNotFoundError) return undefined;
          throw toSdkError(error, workflowId);
        },
      );
    if (status === undefined) return undefined;
    if (status === 'RUNNING') return 'open';
    return (await neverOpened(workflowId)) ? undefined : 'closed';
  }

  /** Whether the newest run of `workflowId` is closed and ended with a start error. */
  async function neverOpened(workflowId: string): Promise<boolean> {
    const handle = client.workflow.getHandle(workflowId);
    const status = await handle.describe().then(
      (d) => d.status.name,
      () => undefined,
    );
    if (status !== 'COMPLETED') return false;
    const result = (await handle.result().catch(() => undefined)) as
      SessionWorkflowResult | undefined;
    return result?.startError !== undefined;
  }

  async function session(idOrWorkflowId: string): Promise<Session> {
    // `session-<id>` (the workflow id the Web UI shows) names session `<id>`, or else a
    // session whose own id starts with `session-`.
    let notFound: Error | undefined;
    for (const sessionId of sessionIdCandidates(idOrWorkflowId)) {
      const handle = client.workflow.getHandle(sessionWorkflowId(sessionId));
      try {
        await handle.describe();
      } catch (error) {
        const converted = toSdkError(error, idOrWorkflowId);
        if (!(converted instanceof SessionNotFoundError)) throw converted;
        notFound ??= converted;
        continue;
      }
      return new Session(
        sessionId,
        handle,
        payloads.payloadStore,
        calls,
        undefined,
        streams,
        tracing?.run,
      );
    }
    throw notFound ?? new SessionNotFoundError(idOrWorkflowId);
  }

  async function listSessions(
    listOptions: { limit?: number } & SessionFilter = {},
  ): Promise<SessionSummary[]> {
    const { limit, ...filter } = listOptions;
    return listSessionSummaries(client, limit ?? 100, filter);
  }

  const agentClient: AgentClient = {
    temporal: client,
    createSession,
    session,
    listSessions,
    close: async () => {
      // Calls still in flight (a send waiting on a person, a retry) end first, with an
      // error, rather than retrying on a closed channel.
      calls.close(new EngineError('ENGINE_ERROR', 'The client was closed'));
      await connection.close();
      await tracing?.release();
    },
  };
  callsOfClient.set(agentClient, calls);
  return agentClient;
}

const callsOfClient = new WeakMap<AgentClient, ClientCalls>();

/**
 * The in-flight call book-keeping of a client made by {@link createClientOn}.
 * @internal for the agent (a close waits for its session's calls) and tests.
 */
export function clientCallsOf(client: AgentClient): ClientCalls | undefined {
  return callsOfClient.get(client);
}

/**
 * The error of a session whose workflow task kept failing while createSession waited for it
 * to open: names the task's last recorded failure (decoded with the agent's codecs) and that
 * the workflow still runs (it opens once a worker runs its task; terminate it otherwise).
 */
async function taskKeepsFailing(
  handle: WorkflowHandle,
  sessionId: string,
  payloads: AgentPayloads,
  error: unknown,
): Promise<EngineError> {
  let failure = 'no failure recorded yet';
  try {
    const history = await decodeHistoryPayloads(
      await handle.fetchHistory(),
      payloads.dataConverter.payloadCodecs ?? [],
    );
    const failed = (history.events ?? [])
      .map((e) => e.workflowTaskFailedEventAttributes)
      .filter((a) => a)
      .at(-1);
    if (failed)
      failure = `the last one failed with: ${failed.failure?.message ?? String(failed.cause)}`;
  } catch (readError) {
    failure = `its history could not be read: ${messageOf(readError)}`;
  }
  return new EngineError(
    'ENGINE_ERROR',
    `Session '${sessionId}' did not open: its workflow task kept failing while createSession ` +
      `waited (about 40 s); ${failure}. Its workflow (${handle.workflowId}) still runs and opens ` +
      `once a worker runs the task; terminate it if none will.`,
    { cause: error },
  );
}

/** gRPC status names by code, for the message of a refused start. */
const GRPC_STATUS = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/**
 * The documented error of a session's start the server refused: `ENGINE_ERROR` naming the
 * server's answer (Temporal's own message, `Failed to start Workflow`, says nothing of why),
 * the `ServiceError` as `cause`. Anything else as {@link toSdkError} maps it.
 */
/** gRPC statuses by which the server refuses a start outright: nothing was started. */
const REFUSALS = new Set(['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'PERMISSION_DENIED']);

export function startRefused(error: unknown, sessionId: string): Error {
  if (!(error instanceof ServiceError)) return toSdkError(error, sessionId);
  const grpc = (error.cause ?? {}) as { code?: unknown; details?: unknown; message?: unknown };
  const status = typeof grpc.code === 'number' ? GRPC_STATUS[grpc.code] : undefined;
  const said = String(grpc.details || grpc.message || error.message);
  // Unavailable, a deadline, ...: the start may have gone through, so "refused" would mislead.
  if (!status || !REFUSALS.has(status)) {
    return new EngineError(
      'ENGINE_ERROR',
      `Session '${sessionId}' may not have started: its workflow's start failed ` +
        `(${status ? `${status}: ` : ''}${said}); createSession with the same sessionId attaches ` +
        `if it did.`,
      { cause: error },
    );
  }
  return new EngineError(
    'ENGINE_ERROR',
    `Session '${sessionId}' was not started: the Temporal server refused its workflow's ` +
      `start (${status ? `${status}: ` : ''}${said}).`,
    { cause: error },
  );
}

/**
 * The documented error of a session that did not start: SESSION_START_FAILED as it is (an
 * abort's reason), anything else (a lost worker, a timeout, a thrown error) as its cause.
 */
function startFailure(error: Error): Error {
  if (error instanceof HookError && error.code === 'SESSION_START_FAILED') return error;
  return new HookError('SESSION_START_FAILED', `SessionStart failed: ${error.message}`, {
    event: HookEvent.SessionStart,
    ...(typeof (error as HookError).callbackIndex === 'number'
      ? { callbackIndex: (error as HookError).callbackIndex }
      : {}),
    cause: error,
  });
}

/**
 * Connect a client to `address` and check that its namespace exists.
 * @param versioning the routing in force, when known (`createAgent` passes its worker's);
 *   else `advanced.temporal.versioning` resolved against the server here.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` when nothing usable answers at
 *   `address` (at once for a refused port or an unknown host, else after the connect
 *   deadline), `NAMESPACE_NOT_FOUND` when the server lacks `options.temporal.namespace`.
 * @throws {ConfigError} for `advanced.temporal.versioning: 'deployments'` on a server
 *   without Worker Deployments.
 */
export async function connectClient(
  address: string,
  options: ResolvedAgentOptions,
  registry?: AgentRegistry,
  versioning?: VersioningMode,
): Promise<AgentClient> {
  const payloads = await agentPayloadsOf(options);
  // Tracing on: Temporal's OpenTelemetry plugin joins the application's plugins.
  const tracing = await acquireTracing(options);
  let connection: Connection;
  try {
    connection = await connectTemporalClient(address, options.temporal.namespace, {
      security: options.temporal.connection,
      plugins: tracing ? [...options.temporal.plugins, tracing.plugin] : options.temporal.plugins,
    });
  } catch (error) {
    await tracing?.release();
    throw error;
  }
  let routing: VersioningMode;
  try {
    routing =
      versioning ??
      (await resolveVersioning(options.temporal.versioning, connection.workflowService, {
        side: 'client',
        agentName: options.name,
        version: options.version,
        address,
        namespace: options.temporal.namespace,
        logger: options.logger,
        logLevel: options.logLevel,
      }));
  } catch (error) {
    await connection.close().catch(() => undefined);
    await tracing?.release();
    throw error;
  }
  return createClientOn(connection, options, payloads, registry, tracing, routing);
}

/**
 * Sessions of the client's namespace (workflows of type `sessionWorkflow`), newest first,
 * those of `filter` only (`taskQueue`: those started on that task queue, one agent's).
 * @throws {ConfigError} for a status of a running session or an agent filter on a server
 *   without the session search attributes (naming the command that registers them), or an
 *   unknown status.
 */
export async function listSessionSummaries(
  client: Client,
  limit: number,
  filter: SessionFilter = {},
): Promise<SessionSummary[]> {
  const query = [
    `WorkflowType = '${SESSION_WORKFLOW}'`,
    ...(filter.status !== undefined ? [sessionStatusQuery(filter.status)] : []),
    ...(filter.agentName !== undefined
      ? [`${AGENT_NAME_KEY.name} = ${quoted(filter.agentName)}`]
      : []),
    ...(filter.taskQueue !== undefined ? [`TaskQueue = ${quoted(filter.taskQueue)}`] : []),
  ].join(' AND ');
  const rows: SessionSummary[] = [];
  // The raw listing, not `client.workflow.list()`: that one decodes every memo, and one
  // session encrypted under a key this process lacks would end the whole list. A summary
  // needs no memo.
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService
      .listWorkflowExecutions({
        namespace: client.options.namespace,
        query,
        pageSize: Math.min(limit, 1000),
        ...(nextPageToken ? { nextPageToken } : {}),
      })
      .catch((error: unknown) => {
        if (!isMissingSearchAttribute(error)) throw error;
        throw new ConfigError(
          `Namespace '${client.options.namespace}' has no session search attributes, so ` +
            `sessions cannot be listed by status or agent. Register them once with: ` +
            searchAttributeCreateCommand(client.options.namespace),
        );
      });
    for (const execution of page.executions ?? []) {
      const workflowId = execution.execution?.workflowId ?? '';
      const row: SessionSummary = {
        sessionId: sessionIdOfWorkflowId(workflowId) ?? workflowId,
        workflowId,
        status: statusName(execution.status),
        startTime: optionalTsToDate(execution.startTime) ?? new Date(0),
        closeTime: optionalTsToDate(execution.closeTime),
        ...searchAttributesOf(execution.searchAttributes?.indexedFields),
      };
      const sessionStatus = sessionListStatus(row.status, row.agentStatus);
      rows.push(sessionStatus !== undefined ? { ...row, sessionStatus } : row);
      if (rows.length >= limit) return rows;
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return rows;
}

/** `RUNNING`, `COMPLETED`, ...: Temporal's status enum name without its prefix. */
function statusName(status: number | null | undefined): string {
  const name = proto.temporal.api.enums.v1.WorkflowExecutionStatus[status ?? 0] ?? 'UNSPECIFIED';
  return name.replace(/^WORKFLOW_EXECUTION_STATUS_/, '');
}

/** A string in a visibility query, single quotes escaped. */
function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The session search attributes of a listed execution, those it has. */
function searchAttributesOf(
  fields: Record<string, proto.temporal.api.common.v1.IPayload> | null | undefined,
): Pick<SessionSummary, 'agentName' | 'agentStatus' | 'pendingApprovals' | 'lastDecision'> {
  if (!fields) return {};
  const held = decodeTypedSearchAttributes(fields as Record<string, Payload>);
  const agentName = held.get(AGENT_NAME_KEY);
  const agentStatus = held.get(STATUS_KEY);
  const pendingApprovals = held.get(PENDING_APPROVALS_KEY);
  const lastDecision = held.get(LAST_DECISION_KEY);
  return {
    ...(agentName !== undefined ? { agentName } : {}),
    ...(agentStatus !== undefined ? { agentStatus: agentStatus as SessionSearchStatus } : {}),
    ...(pendingApprovals !== undefined ? { pendingApprovals } : {}),
    ...(lastDecision !== undefined ? { lastDecision } : {}),
  };
}
