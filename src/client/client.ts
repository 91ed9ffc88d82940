/**
 * The client side of an agent: starts, attaches to and lists sessions, without running
 * hooks (a front end of a worker fleet).
 *
 * @module
 */
import type { Client, Connection } from '@temporalio/client';
import { EngineError } from '../common/errors.js';
import type { ResolvedAgentOptions, SessionOptions } from '../definition/options.js';
import type { AgentRegistry } from '../definition/registry.js';
import { agentPayloadsOf, type AgentPayloads } from '../payloads/data-converter.js';
import { connectTemporalClient } from '../temporal/connection.js';
import { resolveVersioning, type VersioningMode } from '../temporal/versioning.js';
import { acquireTracing, type AgentTracing } from '../tracing/tracing.js';
import type { ClientCalls } from './client-calls.js';
import { clientContextOn } from './client-context.js';
import { listSessionSummaries, type SessionFilter, type SessionSummary } from './list-sessions.js';
import type { Session } from './session.js';
import { attachSession, createSession } from './start-session.js';
import { raiseSharedBudget, readSharedBudget } from './shared-budget-calls.js';
import type { BudgetCaps } from '../common/budgets.js';
import type { SharedBudgetStatus } from '../common/shared-budgets.js';

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
   * A budget the agent shares (`advanced.budgets.shared`, docs/budgets.md) by its key:
   * `agent:<name>` or `tenant:<tenant>`, then `:<window>` when windowed (`tenant:acme:day`).
   * Spent and leased in the current window, raises, the last windows.
   * @returns undefined when no session has spent from it yet.
   */
  sharedBudget(key: string): Promise<SharedBudgetStatus | undefined>;
  /**
   * Set caps of a shared budget for every session spending from it (they hold over the caps
   * the agents give), recorded in its history with `identity`. A session refused by it goes
   * on with its next `send()`.
   * @throws {ConfigError} for a negative or non-integer cap, naming it; when no session has
   *   spent from the budget yet.
   */
  raiseSharedBudget(
    key: string,
    caps: BudgetCaps,
    options?: { identity?: string },
  ): Promise<SharedBudgetStatus>;
  /**
   * Close the connection (sessions stay as they are on the server). A `send()`, `close()`,
   * `abort()` or approval of this client's sessions still in flight ends with an
   * `EngineError` ("The client of session … was closed while its … call was in flight").
   * Each call runs under an abort signal of its own, so a client makes any number of calls
   * without piling up listeners.
   */
  close(): Promise<void>;
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
  const ctx = clientContextOn(connection, options, payloads, registry, tracing, versioning);
  const { calls, client } = ctx;
  const agentClient: AgentClient = {
    temporal: client,
    createSession: (sessionOptions?: SessionOptions) => createSession(ctx, sessionOptions),
    session: (idOrWorkflowId: string) => attachSession(ctx, idOrWorkflowId),
    listSessions: async (listOptions: { limit?: number } & SessionFilter = {}) => {
      const { limit, ...filter } = listOptions;
      return listSessionSummaries(client, limit ?? 100, filter);
    },
    sharedBudget: (key: string) => readSharedBudget(client, key),
    raiseSharedBudget: (key, caps, raiseOptions = {}) =>
      raiseSharedBudget(client, key, caps, raiseOptions.identity),
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
