/**
 * The worker side of an agent: runs session workflows and their activities (hooks, model
 * steps), and finds callbacks in this process's registry.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type ActivityInterceptorsFactory,
  type LogLevel,
} from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import type { BudgetClock } from '../activities/budget-clock.js';
import type { HookMap } from './common/types.js';
import type { AgentModel } from './models/model.js';
import { resolveModel } from './models/resolve.js';
import type { ResolvedAgentOptions } from './options.js';
import { AgentRegistry } from './registry.js';
import { normalizeRoots } from './tools/workspace.js';
import { toolEnvironment } from './tools/builtin/bash.js';
import { workflowBundle } from './workflow-code.js';
import { dataConverterOf } from './payloads/data-converter.js';

/** A running worker (two Temporal workers: the shared task queue and a process-unique one). */
export interface AgentWorker {
  /** The shared task queue this worker polls. */
  readonly taskQueue: string;
  /**
   * This process's own task queue: a callback that outlived its dispatch is waited on here,
   * so the session is released when it settles or when this process dies.
   */
  readonly cleanupQueue: string;
  /** The registry the activities read; sessions created in-process add their hooks here. */
  readonly registry: AgentRegistry;
  /** Resolves when the worker stopped; rejects if it crashed. */
  readonly done: Promise<void>;
  /** Stop polling, let in-flight activities finish within the grace time, and close. */
  shutdown(): Promise<void>;
}

/**
 * Start a worker for one agent definition on `options.temporal.taskQueue`.
 * @throws when the server is unreachable or the workflow code fails to bundle.
 */
export async function startAgentWorker(
  options: ResolvedAgentOptions,
  address: string,
  extra: {
    registry?: AgentRegistry;
    model?: AgentModel;
    hooks?: HookMap;
    /** The clock hook and tool budgets run on (the test env's, on the time-skipping server). */
    clock?: BudgetClock;
    /** Interceptors of every activity (the test env's worker kill switch). */
    activityInterceptors?: ActivityInterceptorsFactory[];
    /** After this long a shutdown stops waiting for activities, ms. @default wait for them */
    shutdownForceTimeMs?: number;
  } = {},
): Promise<AgentWorker> {
  installQuietRuntime();
  const registry = extra.registry ?? new AgentRegistry();
  registry.register({
    name: options.name,
    hooks: extra.hooks ?? options.hooks,
    model: extra.model ?? resolveModel(options),
    tools: options.tools,
    workspaceRoots: await normalizeRoots(options.workspaceRoots),
    ...(typeof options.permission === 'function' ? { permission: options.permission } : {}),
    maxToolOutputBytes: options.maxToolOutputBytes,
    // Read once, here: tool processes never see the rest of this process's environment.
    toolEnv: toolEnvironment(options.toolEnv),
  });
  const { namespace, taskQueue, heartbeatIntervalMs, shutdownGraceTimeMs } = options.temporal;
  const cleanupQueue = `${taskQueue}/cleanup/${randomUUID()}`;
  const connection = await NativeConnection.connect({ address });
  const activities = createActivities({
    registry,
    cleanupQueue,
    heartbeatIntervalMs,
    payloadStore: options.payloadStore,
    ...(extra.clock ? { clock: extra.clock } : {}),
  });
  const heartbeatThrottle = `${heartbeatIntervalMs}ms`;
  const common = {
    connection,
    namespace,
    // The throttle bounds how often heartbeats (and so cancellations) travel: see TemporalOptions.
    maxHeartbeatThrottleInterval: heartbeatThrottle,
    defaultHeartbeatThrottleInterval: heartbeatThrottle,
    shutdownGraceTime: shutdownGraceTimeMs,
    ...(extra.shutdownForceTimeMs !== undefined
      ? { shutdownForceTime: extra.shutdownForceTimeMs }
      : {}),
    ...(extra.activityInterceptors
      ? { interceptors: { activity: extra.activityInterceptors } }
      : {}),
    dataConverter: dataConverterOf(options),
  } as const;
  const main = await Worker.create({
    ...common,
    taskQueue,
    stickyQueueScheduleToStartTimeout: options.temporal.stickyQueueScheduleToStartTimeoutMs,
    workflowBundle: options.temporal.workflowBundle ?? (await workflowBundle()),
    activities,
  });
  const cleanup = await Worker.create({
    ...common,
    taskQueue: cleanupQueue,
    activities: { awaitHookSettled: activities.awaitHookSettled },
  });
  const done = Promise.all([main.run(), cleanup.run()]).then(() => undefined);
  let stopping: Promise<void> | undefined;
  return {
    taskQueue,
    cleanupQueue,
    registry,
    done,
    shutdown() {
      stopping ??= (async () => {
        for (const w of [main, cleanup]) if (w.getState() === 'RUNNING') w.shutdown();
        await done.catch(() => undefined);
        await connection.close();
      })();
      return stopping;
    },
  };
}

let runtimeInstalled = false;

/** Lines of the Temporal runtime that say nothing a user of this SDK can act on. */
const QUIET_LOG_LINES = [
  // The cleanup worker runs activities only, on purpose.
  'No workflows registered',
  // The time-skipping test server does not advertise this capability; no hook reads
  // heartbeat details of a failed activity.
  'the server did not advertise the activity_failure_include_heartbeat capability',
  // The hook test env's killWorkerAt: the dropped result of a worker it killed.
  'This worker was killed by the test',
];

function safeJson(value: unknown): string {
  try {
    // Errors carry their words in non-enumerable fields.
    return (
      JSON.stringify(value, (_key, v: unknown) =>
        v instanceof Error ? `${v.name}: ${v.message}` : v,
      ) ?? ''
    );
  } catch {
    return '';
  }
}

/**
 * Temporal's default logger prints every worker state change at INFO. Install a runtime
 * logging at `DURABLE_AGENT_LOG_LEVEL` (default WARN), the core's own lines forwarded to it,
 * unless the application installed its own runtime first (then `Runtime.install` throws
 * and theirs stays).
 */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (process.env.DURABLE_AGENT_LOG_LEVEL ?? 'WARN') as LogLevel;
  try {
    Runtime.install({
      logger: new DefaultLogger(level, (entry) => {
        const text = `${entry.message} ${safeJson(entry.meta)}`;
        if (QUIET_LOG_LINES.some((line) => text.includes(line))) return;
        const meta = entry.meta && Object.keys(entry.meta).length > 0 ? entry.meta : '';
        console.error(`[temporal ${entry.level}] ${entry.message}`, meta);
        if (text.includes('ACTIVITY_UNKNOWN')) {
          console.error(ACTIVITY_UNKNOWN_HINT);
        }
      }),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // A runtime exists already: keep the application's.
  }
}

/**
 * Temporal's time-skipping test server refuses a workflow's request to cancel an activity
 * whose completion it has just buffered (`ACTIVITY_UNKNOWN`) and then never hands the run
 * another workflow task, so the session stops there. A real server accepts the request.
 */
const ACTIVITY_UNKNOWN_HINT =
  '[durable-agent-sdk] The server refused to cancel an activity that had just completed ' +
  "(ACTIVITY_UNKNOWN). Temporal's time-skipping test server does this when an abort races a " +
  "hook or tool finishing, and the session then stops. Run such a test with server: 'dev' " +
  '(createHookTestEnv), or deliver the abort with env.abortAt(), which waits for it to land.';
