/**
 * Starting a session, or attaching to one: the checks before the start, the start of the
 * session's workflow, the `ready` Update that waits for SessionStart, and the documented
 * errors of a start that failed.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import {
  type Client,
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
  sessionIdCandidates,
  sessionWorkflowId,
  type SessionWorkflow,
  type SessionWorkflowInput,
  type SessionWorkflowResult,
} from '../common/workflow-io.js';
import { Updates } from '../common/messages.js';
import type { SessionOptions } from '../definition/options.js';
import { validateSessionOptions } from '../definition/resolve.js';
import { decodeHistoryPayloads } from '../history/decode.js';
import type { AgentPayloads } from '../payloads/data-converter.js';
import { inSpan, SpanAttributes } from '../tracing/spans.js';
import type { ClientContext } from './client-context.js';
import { sessionWorkflowInput } from './session-input.js';
import { Session } from './session.js';
import {
  isTransientTaskFailure,
  retryingUpdate,
  TASK_FAILURE_WAIT_MS,
  toSdkError,
} from './update-calls.js';
import { startPinned, unpinnedServed, versionServed } from './version-routing.js';

/**
 * How long `createSession` waits for some worker to take a session's first workflow task, ms:
 * as long as any Update of a session waits out a failed workflow task.
 */
const FIRST_TASK_WAIT_MS = TASK_FAILURE_WAIT_MS;

/** {@link startSession}, in a `session.create` span when tracing is on. */
export async function createSession(
  ctx: ClientContext,
  sessionOptions: SessionOptions = {},
): Promise<Session> {
  const { options, tracing } = ctx;
  if (!tracing) return startSession(ctx, sessionOptions);
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
      const session = await startSession(ctx, sessionOptions);
      span.setAttribute(SpanAttributes.sessionId, session.id);
      return session;
    },
  );
}

/** Create a session (see `AgentClient.createSession`), attaching to an open one of its id. */
async function startSession(
  ctx: ClientContext,
  sessionOptions: SessionOptions = {},
): Promise<Session> {
  const { client, payloads, registry, calls, streams, tracing } = ctx;
  validateSessionOptions(sessionOptions);
  // Refused before the server is asked anything: nothing else can make it work.
  refuseCallbacksWithoutWorker(ctx, sessionOptions);
  const sessionId = sessionOptions.sessionId ?? randomUUID();
  const workflowId = sessionWorkflowId(sessionId);
  // An open session already runs its own version: attaching to it pins nothing, so it does
  // not depend on this client's fingerprint (an operator tool, a client-only process of
  // another build, a client after a crash). Only a new session is checked and pinned.
  const existing =
    sessionOptions.sessionId !== undefined ? await sessionState(ctx, workflowId) : undefined;
  if (existing === 'closed') throw new SessionClosedError(sessionId);
  const attaching = existing === 'open';
  if (!attaching) {
    if (ctx.routing.deployments) await versionServed(ctx.routing);
    else await unpinnedServed(ctx.routing);
  }
  registerSessionCallbacks(ctx, sessionId, sessionOptions);
  const input = sessionWorkflowInput(ctx.options, sessionId, sessionOptions);
  await startWorkflow(ctx, input, workflowId, attaching);
  // Attaching to a session that continued as new: `start` answers with the current run as
  // `firstExecutionRunId`, which updates cannot use. Follow the workflow id instead.
  const live = client.workflow.getHandle(workflowId);
  await ready(ctx, live, sessionId);
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
 * Refuse session hooks or a permission function on a client with no worker in this process
 * to run them.
 * @throws {ConfigError} naming which of them it got.
 */
function refuseCallbacksWithoutWorker({ registry }: ClientContext, options: SessionOptions): void {
  if (registry) return;
  if (hasSessionHooks(options)) {
    throw new ConfigError(
      'Session hooks need a worker in this process (createAgent); a client-only agent cannot run them',
    );
  }
  if (options.permissionHandler) {
    throw new ConfigError(
      'A session permissionHandler needs a worker in this process (createAgent); a client-only agent cannot run it',
    );
  }
}

function hasSessionHooks(
  options: SessionOptions,
): options is SessionOptions & { hooks: NonNullable<SessionOptions['hooks']> } {
  return !!options.hooks && Object.keys(options.hooks).length > 0;
}

/** Hand the session's own hooks and permission function to this process's registry. */
function registerSessionCallbacks(
  { registry }: ClientContext,
  sessionId: string,
  sessionOptions: SessionOptions,
): void {
  if (!registry) return; // refused earlier if it had any (refuseCallbacksWithoutWorker)
  if (hasSessionHooks(sessionOptions)) registry.setSessionHooks(sessionId, sessionOptions.hooks);
  if (sessionOptions.permissionHandler) {
    registry.setSessionPermission(sessionId, sessionOptions.permissionHandler);
  }
}

type ReusePolicy = 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE';

/** One start of the session's workflow (a second start of the same session attaches). */
function startOnce(
  { client, options, routing, searchAttributes }: ClientContext,
  input: SessionWorkflowInput,
  workflowId: string,
  reuse: ReusePolicy,
) {
  const { sessionId } = input;
  const typedSearchAttributes = searchAttributes.initial(input.budget !== undefined);
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
    ...(routing.deployments
      ? {
          versioningOverride: {
            pinnedTo: { deploymentName: options.name, buildId: options.version },
          },
        }
      : {}),
    // The workflow keeps status, approvals and decisions up to date when it starts with them.
    ...(typedSearchAttributes ? { typedSearchAttributes } : {}),
  });
}

/**
 * Start the session's workflow, unless `attaching`: again without the search attributes
 * when the server lacks them, after a closed run of the same id that never opened.
 * @throws {SessionClosedError} when a session of this id opened and is closed.
 * @throws {ConfigError} as {@link startPinned} throws.
 * @throws {EngineError} when the server refused the start (see {@link startRefused}).
 */
async function startWorkflow(
  ctx: ClientContext,
  input: SessionWorkflowInput,
  workflowId: string,
  attaching: boolean,
): Promise<void> {
  const { client, registry, searchAttributes } = ctx;
  const { sessionId } = input;
  // A server without the search attributes refuses the start (nothing started): again without.
  // With Worker Deployments, a just-started worker of this version may not be registered yet.
  const start = (reuse: ReusePolicy) =>
    startPinned(ctx.routing, () =>
      startOnce(ctx, input, workflowId, reuse).catch((error: unknown) => {
        if (!searchAttributes.refusedForMissing(error)) throw error;
        // Once more at most: a budgeted session refused for its spend attributes, then for
        // the others.
        return startOnce(ctx, input, workflowId, reuse).catch((again: unknown) => {
          if (!searchAttributes.refusedForMissing(again)) throw again;
          return startOnce(ctx, input, workflowId, reuse);
        });
      }),
    );
  try {
    try {
      if (!attaching) await start('REJECT_DUPLICATE');
    } catch (error) {
      // A closed session of this id: refused, unless it never opened (its SessionStart
      // failed). Then the id is free again, and a new run starts the session afresh.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      if (!(await neverOpened(client, workflowId))) throw new SessionClosedError(sessionId);
      await start('ALLOW_DUPLICATE');
    }
  } catch (error) {
    registry?.removeSessionHooks(sessionId);
    if (error instanceof SessionClosedError || error instanceof ConfigError) throw error;
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      throw new SessionClosedError(sessionId);
    throw startRefused(error, sessionId);
  }
}

/**
 * Wait until the session is open (SessionStart has run), with the retries of every Update of
 * a session.
 * @throws the documented error of a session that did not open (see {@link readyFailure}).
 */
async function ready(ctx: ClientContext, live: WorkflowHandle, sessionId: string): Promise<void> {
  const { calls } = ctx;
  // The same retries as every Update of a session: a first workflow task that failed
  // transiently (its worker died, say) leaves the task in failed state until a worker
  // runs it again, and the server refuses `ready` meanwhile.
  const readyId = randomUUID();
  // A session no worker takes would keep `ready` waiting forever: see failIfUnserved().
  const watch = { settled: false, unserved: undefined as EngineError | undefined };
  const watching = setTimeout(
    () => void failIfUnserved(ctx, live, sessionId, watch),
    FIRST_TASK_WAIT_MS,
  ).unref();
  try {
    await retryingUpdate(() => live.executeUpdate(Updates.ready, { args: [], updateId: readyId }), {
      name: Updates.ready.name,
      sessionId,
      handle: live,
      calls,
    }).finally(() => {
      watch.settled = true;
      clearTimeout(watching);
    });
  } catch (error) {
    throw await readyFailure(ctx, live, sessionId, error, watch.unserved);
  }
}

/**
 * The error of a session whose `ready` failed, once its callbacks in this process are
 * dropped: no worker took it, SessionStart failed, its task kept failing, or what the
 * workflow's result or the call says.
 */
async function readyFailure(
  { registry, payloads }: ClientContext,
  live: WorkflowHandle,
  sessionId: string,
  error: unknown,
  unserved: EngineError | undefined,
): Promise<Error> {
  if (unserved) {
    registry?.removeSessionHooks(sessionId);
    return unserved;
  }
  if (error instanceof WorkflowUpdateFailedError) {
    registry?.removeSessionHooks(sessionId);
    return startFailure(toSdkError(error, sessionId));
  }
  if (isTransientTaskFailure(error)) {
    registry?.removeSessionHooks(sessionId);
    return taskKeepsFailing(live, sessionId, payloads, error);
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
  if (result?.startError) return startFailure(deserializeError(result.startError));
  return toSdkError(error, sessionId);
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
  { options, routing }: ClientContext,
  live: WorkflowHandle,
  sessionId: string,
  watch: { settled: boolean; unserved: EngineError | undefined },
): Promise<void> {
  const taken = await live.describe().then(
    (d) => d.historyLength > 2 || d.status.name !== 'RUNNING',
    () => true, // unknown: leave it to `ready`
  );
  if (taken || watch.settled) return;
  const routingSaid = routing.deployments
    ? `no worker of agent '${options.name}' version '${options.version}' serves it`
    : `no unversioned worker of agent '${options.name}' serves it`;
  watch.unserved = new EngineError(
    'WORKER_UNAVAILABLE',
    `Session '${sessionId}' was not started: no worker took its first workflow task within ` +
      `${FIRST_TASK_WAIT_MS / 1000} s on task queue '${options.temporal.taskQueue}' (${routingSaid}; ` +
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

/**
 * The newest run of `workflowId` as a `createSession` of its id sees it: `open` (running,
 * SessionStart run or still running), `closed` (it opened and ended), or `undefined` (no
 * such session, one that never opened, or unknown: the start then decides).
 */
async function sessionState(
  { client }: ClientContext,
  workflowId: string,
): Promise<'open' | 'closed' | undefined> {
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
  return (await neverOpened(client, workflowId)) ? undefined : 'closed';
}

/** Whether the newest run of `workflowId` is closed and ended with a start error. */
async function neverOpened(client: Client, workflowId: string): Promise<boolean> {
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

/**
 * A handle on the existing session `idOrWorkflowId` (see `AgentClient.session`).
 * @throws {SessionNotFoundError} when no session has this id.
 */
export async function attachSession(
  { client, payloads, calls, streams, tracing }: ClientContext,
  idOrWorkflowId: string,
): Promise<Session> {
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

/** gRPC statuses by which the server refuses a start outright: nothing was started. */
const REFUSALS = new Set(['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'PERMISSION_DENIED']);

/**
 * The documented error of a session's start the server refused: `ENGINE_ERROR` naming the
 * server's answer (Temporal's own message, `Failed to start Workflow`, says nothing of why),
 * the `ServiceError` as `cause`. Anything else as {@link toSdkError} maps it.
 */
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
