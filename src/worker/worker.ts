/**
 * The worker side of an agent: runs session workflows and their activities (hooks, model
 * steps), and finds callbacks in this process's registry.
 *
 * @module
 */
import { sharedBudgetTaskQueue } from '../common/shared-budgets.js';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { NativeConnection } from '@temporalio/worker';
import { Worker, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { BudgetClock } from '../../activities/budget-clock.js';
import type { AgentModel } from '../models/model.js';
import { resolveModel } from '../models/resolve.js';
import type { ResolvedAgentOptions } from '../definition/options.js';
import { AgentRegistry } from '../definition/registry.js';
import { subagentRegistrations } from './subagent-registration.js';
import { normalizeRoots, WorkspaceError } from '../tools/workspace.js';
import { ConfigError } from '../common/errors.js';
import {
  bundleWithExtras,
  resolveWorkflowBundle,
  type WorkflowBundleSource,
} from './workflow-code.js';
import { ConversationCache } from '../../activities/conversation-cache.js';
import { agentWorkerIdentity } from '../common/identity.js';
import { toolEnvironment } from '../tools/builtin/bash.js';
import { McpConnections, checkMcpSdk } from '../mcp/connections.js';
import { agentPayloadsOf, type AgentPayloads } from '../payloads/data-converter.js';
import {
  AGENT_CONNECTION_HINTS,
  isNamespaceNotFound,
  namespaceNotFound,
} from '../temporal/connection.js';
import { acquireTracing, type AgentTracing } from '../tracing/tracing.js';
import { resolveVersioning, type VersioningMode } from '../temporal/versioning.js';
import { connectWorker, installQuietRuntime } from './runtime.js';

/** A running worker (two Temporal workers: the shared task queue and a process-unique one). */
export interface AgentWorker {
  /** The shared task queue this worker polls. */
  readonly taskQueue: string;
  /** The agent's name (the Worker Deployment name). */
  readonly agentName: string;
  /**
   * The version this worker runs (the Worker Deployment build id): it runs tasks of sessions
   * of this version and fingerprint only, and refuses every other.
   */
  readonly version: string;
  /** The fingerprint of the definition it runs (16 hex digits). */
  readonly fingerprint: string;
  /**
   * The routing in force (`advanced.temporal.versioning`, `'auto'` resolved against the
   * server): `'deployments'` when it polls as Worker Deployment version
   * `<agentName>.<version>`, `'off'` when unversioned.
   */
  readonly versioning: VersioningMode;
  /**
   * This process's own task queue: a callback that outlived its dispatch is waited on here,
   * so the session is released when it settles or when this process dies.
   */
  readonly cleanupQueue: string;
  /** The registry the activities read; sessions created in-process add their hooks here. */
  readonly registry: AgentRegistry;
  /**
   * Where the workflow code this worker runs came from: `package` (the bundle prebuilt by
   * `npm run build`, the fast start), `sources` (bundled at startup, with the reason no
   * prebuilt bundle was used), `option` or `environment`.
   */
  readonly workflowBundle: WorkflowBundleSource;
  /** This worker's copies of its sessions' model contexts, and their hit and miss counts. */
  readonly conversationCache: ConversationCache;
  /** Resolves when the worker stopped; rejects if it crashed. */
  readonly done: Promise<void>;
  /** Stop polling, let in-flight activities finish within the grace time, and close. */
  shutdown(): Promise<void>;
}

/** What tests and the assembly may give a worker besides its options. */
interface WorkerExtras {
  registry?: AgentRegistry;
  model?: AgentModel;
  /** The clock hook and tool budgets run on (the test env's, on the time-skipping server). */
  clock?: BudgetClock;
  /** Interceptors of every activity (the test env's worker kill switch). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** After this long a shutdown stops waiting for activities, ms. @default wait for them */
  shutdownForceTimeMs?: number;
}

/**
 * Start a worker for one agent definition on `options.temporal.taskQueue`. Its Temporal
 * lines (and its activities' `Context.current().log`) go to `options.logger` at
 * `options.logLevel` (see `src/temporal/logging.ts`).
 * @throws {ConfigError} for a model id without its API key (see `resolveModel`), a
 *   workspace root that does not exist or is not a folder, or
 *   `advanced.temporal.versioning: 'deployments'` on a server without Worker Deployments.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` when nothing answers at
 *   `address`, `NAMESPACE_NOT_FOUND` when the server lacks the namespace.
 * @throws when the workflow code fails to bundle.
 */
export async function startAgentWorker(
  options: ResolvedAgentOptions,
  address: string,
  extra: WorkerExtras = {},
): Promise<AgentWorker> {
  const registry = extra.registry ?? new AgentRegistry();
  // Refused (ConfigError) when another agent of this process claims this version otherwise.
  const releaseVersion = registry.register(await registrationOf(options, extra.model));
  const { taskQueue, heartbeatIntervalMs } = options.temporal;
  const cleanupQueue = `${taskQueue}/cleanup/${randomUUID()}`;
  const tracing = await tracingOf(options, releaseVersion);
  const plugins = tracing
    ? [...options.temporal.plugins, tracing.plugin]
    : options.temporal.plugins;
  // Find (or bundle) the workflow code while the connection is made.
  const bundling = workflowCodeOf(options, plugins);
  bundling.catch(() => undefined); // awaited below; a failed connect must not leave it unhandled
  const held: WorkerHold = {
    releaseVersion,
    mcp: registry.agent(options.name, options.version).mcp,
    removeSink: addLogSink(options, [taskQueue, cleanupQueue]),
    tracing,
  };
  let connected: WorkerConnection;
  try {
    connected = await connectAgentWorker(options, address, plugins);
  } catch (error) {
    await releaseHold(held);
    throw error;
  }
  const { connection, payloads, versioning } = connected;
  const conversationCache = new ConversationCache();
  const activities = createActivities({
    registry,
    conversationCache,
    cleanupQueue,
    heartbeatIntervalMs,
    payloadStore: payloads.payloadStore,
    ...(extra.clock ? { clock: extra.clock } : {}),
    ...(tracing ? { tracing } : {}),
  });
  let workers: TemporalWorkers;
  try {
    workers = await createTemporalWorkers({
      options,
      connected,
      extra,
      activities,
      conversationCache,
      cleanupQueue,
      bundling,
    });
  } catch (error) {
    await releaseHold(held, connection);
    throw workerCreateError(error, address, options.temporal.namespace);
  }
  const running = [workers.main, workers.cleanup, workers.budgets].flatMap((w) => (w ? [w] : []));
  const done = Promise.all(running.map((w) => w.run())).then(() => undefined);
  let stopping: Promise<void> | undefined;
  const agentWorker: AgentWorker = {
    taskQueue,
    agentName: options.name,
    version: options.version,
    fingerprint: options.fingerprint,
    versioning,
    cleanupQueue,
    registry,
    workflowBundle: workers.workflowBundle,
    conversationCache,
    done,
    shutdown() {
      stopping ??= stopAgentWorker(workers, done, connection, held);
      return stopping;
    },
  };
  temporalWorkersOf.set(agentWorker, workers.main);
  return agentWorker;
}

/**
 * Tracing on: Temporal's OpenTelemetry plugin joins the application's plugins (so the
 * workflow code is bundled with its interceptors). A failure releases the version.
 */
async function tracingOf(
  options: ResolvedAgentOptions,
  releaseVersion: () => void,
): Promise<AgentTracing | undefined> {
  try {
    return await acquireTracing(options);
  } catch (error) {
    releaseVersion();
    throw error;
  }
}

/**
 * Route the Temporal lines of `taskQueues` to the agent's logger; returns the sink's removal,
 * or undefined when the runtime is not this library's.
 */
function addLogSink(options: ResolvedAgentOptions, taskQueues: string[]): (() => void) | undefined {
  // Installed only once the options are known good: a runtime no worker or connection ever
  // used would keep the process alive (and take over SIGTERM) after a refused createAgent.
  const routing =
    options.temporal.runtime === 'never' ? undefined : installQuietRuntime(options.logLevel);
  return routing?.addSink({ taskQueues, logger: options.logger, level: options.logLevel });
}

/** What `Worker.create`'s failure is thrown as. */
function workerCreateError(error: unknown, address: string, namespace: string): unknown {
  // The namespace went away between the check and now: the same clear error.
  if (isNamespaceNotFound(error)) {
    return namespaceNotFound(address, namespace, AGENT_CONNECTION_HINTS, error);
  }
  return error;
}

/** What a worker holds from its start on, given back by a failed start or its shutdown. */
interface WorkerHold {
  releaseVersion: () => void;
  /** The MCP servers' connections (stdio servers are this worker's processes), if any. */
  mcp: McpConnections | undefined;
  removeSink: (() => void) | undefined;
  tracing: AgentTracing | undefined;
}

/** Give back what a start that failed held (closing its connection, if any, quietly). */
async function releaseHold(held: WorkerHold, connection?: NativeConnection): Promise<void> {
  await connection?.close().catch(() => undefined);
  held.removeSink?.();
  held.releaseVersion();
  await held.tracing?.release();
  await held.mcp?.close();
}

/** @see AgentWorker.shutdown */
async function stopAgentWorker(
  workers: TemporalWorkers,
  done: Promise<void>,
  connection: NativeConnection,
  held: WorkerHold,
): Promise<void> {
  for (const w of [workers.main, workers.cleanup, workers.budgets]) {
    if (w?.getState() === 'RUNNING') w.shutdown();
  }
  await done.catch(() => undefined);
  await connection.close();
  held.removeSink?.();
  held.releaseVersion();
  // After the workers stopped: the workflow's last spans came through its sink.
  await held.tracing?.release();
  // After the workers stopped: no MCP call is running any more.
  await held.mcp?.close();
}

/** What the worker's registry holds of the definition: callbacks, model, tools, limits. */
async function registrationOf(
  options: ResolvedAgentOptions,
  model: AgentModel | undefined,
): Promise<Parameters<AgentRegistry['register']>[0]> {
  const subagents = subagentRegistrations(options);
  if (options.mcpServers) await checkMcpSdk();
  // Read once, here: tool processes never see the rest of this process's environment.
  const toolEnv = toolEnvironment(options.toolEnv);
  return {
    name: options.name,
    version: options.version,
    fingerprint: options.fingerprint,
    manifest: options.manifest,
    hooks: options.hooks,
    model: model ?? resolveModel(options),
    tools: options.tools,
    workspaceRoots: await workspaceRootsOf(options.workspaceRoots),
    ...(typeof options.permission === 'function' ? { permission: options.permission } : {}),
    maxToolOutputBytes: options.maxToolOutputBytes,
    toolEnv,
    ...(options.stream ? { stream: options.stream } : {}),
    ...(options.approvals?.notify ? { approvalNotify: options.approvals.notify } : {}),
    ...(subagents ? { subagents } : {}),
    // A stdio server's environment is the tools' own plus its `env`: never this process's.
    ...(options.mcpServers
      ? { mcp: new McpConnections(options.mcpServers, { env: toolEnv }) }
      : {}),
  };
}

/** The workflow code: the given bundle, one made with the interceptors and bundler plugins, or the package's. */
function workflowCodeOf(
  options: ResolvedAgentOptions,
  plugins: ResolvedAgentOptions['temporal']['plugins'],
): ReturnType<typeof resolveWorkflowBundle> {
  const given = options.temporal.workflowBundle;
  const workflowModules = options.temporal.interceptors.workflowModules ?? [];
  const bundlerPlugins = plugins.filter((p) => typeof p.configureBundler === 'function');
  const encodeFailures = options.encryption !== undefined;
  return given
    ? Promise.resolve({ bundle: given, source: { from: 'option' } as const })
    : workflowModules.length > 0 || bundlerPlugins.length > 0
      ? bundleWithExtras(workflowModules, bundlerPlugins, { encodeFailures })
      : resolveWorkflowBundle({ encodeFailures });
}

/** The worker's connection, its payload path and the versioning it runs with. */
interface WorkerConnection {
  connection: NativeConnection;
  payloads: AgentPayloads;
  versioning: VersioningMode;
}

/**
 * Connect, and settle the payload path and the versioning mode; a failure after connecting
 * closes the connection before it is thrown.
 */
async function connectAgentWorker(
  options: ResolvedAgentOptions,
  address: string,
  plugins: ResolvedAgentOptions['temporal']['plugins'],
): Promise<WorkerConnection> {
  const { namespace } = options.temporal;
  const payloads = await agentPayloadsOf(options);
  const connection = await connectWorker(address, namespace, options.temporal.connection, plugins);
  try {
    const versioning = await resolveVersioning(
      options.temporal.versioning,
      connection.workflowService,
      {
        side: 'worker',
        agentName: options.name,
        version: options.version,
        address,
        namespace,
        logger: options.logger,
        logLevel: options.logLevel,
      },
    );
    return { connection, payloads, versioning };
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}

/** The two Temporal workers of an agent worker, and where its workflow code came from. */
interface TemporalWorkers {
  main: Worker;
  cleanup: Worker;
  /** The shared budgets' workflows (`sharedBudgetTaskQueue`): only an agent sharing one. */
  budgets?: Worker;
  workflowBundle: WorkflowBundleSource;
}

/**
 * The agent's Temporal workers: `main` on the agent's task queue (the session workflow and
 * every activity), `cleanup` on this process's own queue (waits for callbacks that outlived
 * their dispatch).
 */
async function createTemporalWorkers(parts: {
  options: ResolvedAgentOptions;
  connected: WorkerConnection;
  extra: { activityInterceptors?: ActivityInterceptorsFactory[]; shutdownForceTimeMs?: number };
  activities: ReturnType<typeof createActivities>;
  conversationCache: ConversationCache;
  cleanupQueue: string;
  bundling: ReturnType<typeof resolveWorkflowBundle>;
}): Promise<TemporalWorkers> {
  const { options, connected, extra, activities, conversationCache } = parts;
  const { namespace, taskQueue, heartbeatIntervalMs, shutdownGraceTimeMs, interceptors } =
    options.temporal;
  const heartbeatThrottle = `${heartbeatIntervalMs}ms`;
  const common = {
    connection: connected.connection,
    namespace,
    // The throttle bounds how often heartbeats (and so cancellations) travel: see TemporalOptions.
    maxHeartbeatThrottleInterval: heartbeatThrottle,
    defaultHeartbeatThrottleInterval: heartbeatThrottle,
    shutdownGraceTime: shutdownGraceTimeMs,
    ...(extra.shutdownForceTimeMs !== undefined
      ? { shutdownForceTime: extra.shutdownForceTimeMs }
      : {}),
    ...(extra.activityInterceptors || interceptors.activity
      ? {
          interceptors: {
            activity: [...(extra.activityInterceptors ?? []), ...(interceptors.activity ?? [])],
          },
        }
      : {}),
    dataConverter: connected.payloads.dataConverter,
  } as const;
  const resolved = await parts.bundling;
  const main = await Worker.create({
    ...common,
    taskQueue,
    // Names its version: a client tells which versions poll the queue (session.upgrade()).
    identity: agentWorkerIdentity(`${process.pid}@${hostname()}`, options.name, options.version),
    // Worker Deployments: this worker is version `<name>.<version>`; its sessions are
    // pinned there, and Temporal routes their tasks to workers of that version only.
    ...(connected.versioning === 'deployments'
      ? {
          workerDeploymentOptions: {
            version: { deploymentName: options.name, buildId: options.version },
            useWorkerVersioning: true,
            defaultVersioningBehavior: 'PINNED',
          } as const,
        }
      : {}),
    stickyQueueScheduleToStartTimeout: options.temporal.stickyQueueScheduleToStartTimeoutMs,
    maxConcurrentWorkflowTaskExecutions: options.temporal.maxConcurrentWorkflowTaskExecutions,
    workflowBundle: resolved.bundle,
    activities,
    // The session workflow hands each model step's context to this worker's cache.
    sinks: conversationCache.sinks(),
  });
  const cleanup = await Worker.create({
    ...common,
    taskQueue: parts.cleanupQueue,
    // Its only activity waits for a callback that already outlived its dispatch: a stopping
    // worker cancels that wait at once (the session then treats the holder as gone) instead
    // of holding shutdown for the grace time meant for hooks still in their budget.
    shutdownGraceTime: 1,
    activities: { awaitHookSettled: activities.awaitHookSettled },
  });
  // Unversioned: a budget outlives the versions of the agents spending from it.
  const budgets = options.budgets?.shared?.length
    ? await Worker.create({
        ...common,
        taskQueue: sharedBudgetTaskQueue(taskQueue),
        workflowBundle: resolved.bundle,
      })
    : undefined;
  return { main, cleanup, ...(budgets ? { budgets } : {}), workflowBundle: resolved.source };
}

const temporalWorkersOf = new WeakMap<AgentWorker, Worker>();

/**
 * Workflows held in the Temporal workflow cache of `worker`'s session worker: open sessions
 * it ran lately (up to `maxCachedWorkflows`); a closed one is evicted when its run ends.
 * `undefined` for a worker not made by {@link startAgentWorker}.
 * @internal for tests and `bench/memory.ts`.
 */
export function cachedWorkflowsOf(worker: AgentWorker): number | undefined {
  return temporalWorkersOf.get(worker)?.getStatus().numCachedWorkflows;
}

/**
 * The real paths of the agent's `workspaceRoots`.
 * @throws {ConfigError} naming `workspaceRoots` and the root at fault (the tools' own
 *   `WorkspaceError` is for a tool call's path, not for the agent's options).
 */
async function workspaceRootsOf(roots: readonly string[]): Promise<string[]> {
  try {
    return await normalizeRoots(roots);
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    throw new ConfigError(`Invalid agent options: workspaceRoots: ${error.message}`, {
      cause: error,
    });
  }
}
