/**
 * The `advanced.temporal` options of an agent: where Temporal is and how the agent uses it
 * (connection, task queue, versioning, plugins and interceptors, the workflow bundle). The
 * agent's options (`src/definition/options.ts`) take them as they are.
 *
 * @module
 */
import type {
  ClientInterceptors,
  ClientPlugin,
  ConnectionPlugin,
  WorkflowClientInterceptor,
} from '@temporalio/client';
import type {
  ActivityInterceptorsFactory,
  BundlerPlugin,
  NativeConnectionPlugin,
  WorkerPlugin,
} from '@temporalio/worker';
import type { TemporalTlsOptions } from './connection-config.js';
import type { RuntimeInstall } from './logging.js';

/**
 * A Temporal plugin (`SimplePlugin` from `@temporalio/plugin`, Temporal's OpenTelemetry
 * plugin, your own): an object with a `name` and any of Temporal's plugin hooks. It is given
 * to the worker's and the client's connections (which hand it to every Worker and Client
 * made on them: `configureNativeConnection`, `configureConnection`, `configureWorker`,
 * `runWorker`, `configureClient`) and to the workflow bundler (`configureBundler`).
 */
export type TemporalPlugin = { readonly name: string } & Partial<
  Omit<WorkerPlugin, 'name'> &
    Omit<ClientPlugin, 'name'> &
    Omit<BundlerPlugin, 'name'> &
    Omit<NativeConnectionPlugin, 'name'> &
    Omit<ConnectionPlugin, 'name'>
>;

/** Temporal interceptors added to the SDK's own: see {@link TemporalOptions.interceptors}. */
export interface TemporalInterceptorOptions {
  /**
   * Activity interceptor factories of the worker (Temporal's `WorkerInterceptors.activity`):
   * they see every activity the SDK runs (hook dispatches, model steps, tools), after the
   * SDK's own. @default none
   */
  activity?: ActivityInterceptorsFactory[];
  /**
   * Workflow interceptor modules (paths or package names the bundler resolves, each
   * exporting `interceptors`), bundled into the session workflow's code: the worker then
   * bundles at startup instead of using the prebuilt bundle. @default none
   */
  workflowModules?: string[];
  /**
   * Interceptors of the client (Temporal's `ClientInterceptors`: `workflow` as an array,
   * `schedule`, ...); workflow client interceptors run after the SDK's own. @default none
   */
  client?: Omit<ClientInterceptors, 'workflow'> & { workflow?: WorkflowClientInterceptor[] };
}

/** Where Temporal is and how the agent uses it. */
export interface TemporalOptions {
  /**
   * `host:port` of the Temporal frontend.
   *
   * Connection settings (this, `namespace`, `tls`, `apiKey`, `metadata`) come from, in
   * order: these options, the `TEMPORAL_*` variables, the profile of Temporal's config file
   * (`profile`, `configFile`), the defaults: the same variables and file as the `temporal`
   * CLI, read through `@temporalio/envconfig`.
   * @default `TEMPORAL_ADDRESS`, else the profile's `address`, else an embedded dev server
   *   started with the agent (without TLS: the variables' and profile's TLS and API key do
   *   not apply to it).
   */
  address?: string;
  /**
   * @default `TEMPORAL_NAMESPACE`, else the profile's `namespace`, else `'default'`
   */
  namespace?: string;
  /**
   * TLS of the connection to Temporal (worker and client): `true` for TLS with the
   * system's roots (Temporal Cloud), an object for a server CA, a server name, or a client
   * certificate and key (mTLS), `false` for none whatever the environment says.
   *
   * Settings are taken field by field from, in order: this option; the variables the
   * `temporal` CLI reads (`TEMPORAL_TLS`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH`,
   * `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_TLS_CLIENT_CERT_PATH`,
   * `TEMPORAL_TLS_CLIENT_KEY_PATH`, and the `_DATA` forms); the `tls` table of the profile
   * (see `profile`).
   * @default TLS when the variables or the profile set it, or when an API key is set; else none
   * @throws {ConfigError} at `createAgent` when a file cannot be read or is not PEM (naming
   *   the option, variable or profile key and the path), when only one of the client
   *   certificate and key is given, or when it is set without an address (the embedded dev
   *   server has no TLS).
   */
  tls?: boolean | TemporalTlsOptions;
  /**
   * API key (Temporal Cloud), sent as `authorization: Bearer <key>` on every call; turns
   * TLS on unless `tls: false`.
   * @default `TEMPORAL_API_KEY`, else the profile's `api_key`, else none
   * @throws {ConfigError} when `authorization` metadata is set too.
   */
  apiKey?: string;
  /**
   * gRPC metadata (headers) sent with every call, by header name (lowercased); merged over
   * `TEMPORAL_GRPC_META_<NAME>` and the profile's `grpc_meta`.
   * @default none
   * @throws {ConfigError} for a name that is not a header name.
   */
  metadata?: Record<string, string>;
  /**
   * The profile of Temporal's config file to read (the `temporal` CLI's `--profile`).
   * @default `TEMPORAL_PROFILE`, else `'default'` (when the file has it)
   * @throws {ConfigError} when the file has no such profile.
   */
  profile?: string;
  /**
   * Temporal's TOML config file (the `temporal` CLI's; `[profile.<name>]` tables with
   * `address`, `namespace`, `api_key`, `[profile.<name>.tls]`, `[profile.<name>.grpc_meta]`).
   * @default `TEMPORAL_CONFIG_FILE`, else `$XDG_CONFIG_HOME/temporalio/temporal.toml` or
   *   `~/.config/temporalio/temporal.toml` (macOS: `~/Library/Application Support/temporalio/`),
   *   which may be absent
   * @throws {ConfigError} when a file named here or by `TEMPORAL_CONFIG_FILE` cannot be read
   *   or parsed.
   */
  configFile?: string;
  /**
   * Read the `TEMPORAL_*` variables and the profile file. `false`: only these options count
   * (and with no `address`, `createAgent` starts its embedded dev server).
   * @default true
   */
  envConfig?: boolean;
  /**
   * Temporal plugins, given to the worker's connection (so to its Workers), the client's
   * connection (so to its Client) and the workflow bundler: Temporal's OpenTelemetry plugin,
   * a codec plugin, your own. A plugin with `configureBundler` makes the worker bundle the
   * workflow code at startup (unless `workflowBundle` is given: then your bundle is used as
   * is and `configureBundler` is not called).
   * @default none
   */
  plugins?: TemporalPlugin[];
  /** Temporal interceptors of the worker, the workflow code and the client. @default none */
  interceptors?: TemporalInterceptorOptions;
  /**
   * Whether the worker installs Temporal's process-wide `Runtime` (`Runtime.install`, one per
   * process) with the SDK's logger (`advanced.logger`, `advanced.logLevel`).
   * - `'if-absent'` (the default): when the worker starts and the process has no Temporal
   *   runtime, install one whose logger is the SDK's: Temporal's worker, activity and workflow
   *   lines go to `advanced.logger` at `advanced.logLevel` (WARN: only real problems), one line
   *   each. An application's own runtime installed before (`Runtime.install` before
   *   `createAgent`) is used as is.
   * - `'never'`: the worker uses the application's runtime, or Temporal's default one
   *   (created on first use, logging at INFO to the console: `Worker state changed` lines and
   *   the like), and `advanced.logger` gets no Temporal lines.
   *
   * Either way the runtime lives while a worker or native connection uses it: an
   * application's `Runtime.install` throws while the agent's worker runs (Temporal's default
   * runtime refuses it too), and works again once the agent is closed. Install yours before
   * `createAgent` to keep it throughout.
   * @default `DURABLE_AGENT_TEMPORAL_RUNTIME` (`if-absent` or `never`), else `'if-absent'`
   * @throws {ConfigError} at `createAgent` for another value of the variable.
   */
  runtime?: RuntimeInstall;
  /**
   * Task queue of sessions and their activities. Derived from the agent's name, so that two
   * differently named agents never share a queue (and never run each other's tasks).
   * @default `'durable-agent.<name>'`, e.g. `'durable-agent.default'`
   */
  taskQueue?: string;
  /** Options of the embedded dev server, used when no address is given. */
  embedded?: {
    /** SQLite file keeping the server's state across restarts. @default in memory */
    dbFilename?: string;
    /** Start the Web UI too. @default false */
    ui?: boolean;
    /** Folder of the cached Temporal CLI. @default the user's cache folder */
    cacheDir?: string;
  };
  /**
   * How often a running hook dispatch heartbeats, and the worker's heartbeat throttle, in
   * ms. It bounds how long `abort()` takes to reach a callback's `abortSignal`: about half
   * of it on average plus a round trip (measured in `bench/`). Only a dispatch still running
   * after this long heartbeats at all; a long-running one sends 1000/interval RPCs a second.
   * @default 25
   */
  heartbeatIntervalMs?: number;
  /**
   * How soon a worker that died mid-dispatch is noticed, ms. The dispatch heartbeats every
   * `heartbeatIntervalMs` from its own timer, so only a worker whose event loop is stuck this
   * long is taken for dead by mistake. @default 5000
   */
  dispatchHeartbeatTimeoutMs?: number;
  /**
   * How soon a worker that died during a model step is noticed, ms: the step then runs again
   * on another worker (it heartbeats every 250 ms from its own timer). A kill during a model
   * call stalls its session this long (`npm run bench:chaos`). The cost of a short one: a
   * worker whose event loop stalls this long (a long GC, a workflow bundle built at startup)
   * has its model calls made again by another worker, and the first answers are dropped.
   * An integer from 1000 to 3600000. Set when a session starts (later runs keep it).
   * @default 30000
   */
  modelHeartbeatTimeoutMs?: number;
  /**
   * How soon a worker that died while running a tool is noticed, ms: the call then ends as a
   * tool that failed to run (tools run at most once: an execution is tried again only when its
   * lost attempt had not begun the tool, `TOOL_EXECUTION_MAX_ATTEMPTS`). A running tool
   * heartbeats every `heartbeatIntervalMs` from its own timer, so only a worker whose event
   * loop is stuck this long is taken for dead by mistake (its tool's result is then dropped).
   * An integer from 1000 to 3600000. Set when a session starts (later runs keep it).
   * @default 10000
   */
  toolHeartbeatTimeoutMs?: number;
  /**
   * How long a stopping worker lets in-flight activities finish, ms. Set it at least as long
   * as your longest hook budget, or a deploy fails in-flight hooks.
   * @default `advanced.hookTimeoutMs` (600000 unless set)
   */
  shutdownGraceTimeMs?: number;
  /**
   * How long a session's workflow task waits for the worker that ran it last before any
   * worker may take it, ms. After a crash this is how long the session stalls; Temporal's
   * default is 10000. The cost of a short one: a worker busy for longer than this (all its
   * workflow task slots taken: `maxConcurrentWorkflowTaskExecutions`) loses the session to
   * another worker (or to itself through the shared queue), which replays it.
   * @default 1000
   */
  stickyQueueScheduleToStartTimeoutMs?: number;
  /**
   * How many workflow tasks the worker holds at once (Temporal's worker option of the same
   * name). A session's next task waits on the worker's sticky queue only until
   * `stickyQueueScheduleToStartTimeoutMs` (1 s) before it goes to any worker and is replayed
   * from its whole history. Under `npm run bench:hotpath`'s throughput load (100 concurrent
   * sessions, one 2-core machine) 200 slots did not keep those timeouts away: 3.9 per 100
   * sends with 200, 5.0 with 40, in one run (2026-12-02); their throughput moved both ways
   * between runs. Needs a workflow cache at least as large (Temporal's default, from the
   * heap, is in the thousands).
   * @default 40 (Temporal's)
   */
  maxConcurrentWorkflowTaskExecutions?: number;
  /**
   * Whether the `DurableAgentStatus` search attribute also follows every turn: `running`
   * while a `send()` runs, `idle` between sends. Each change is an upsert, so a send costs two
   * more history events and two visibility writes; on the dev server that is about 8 ms of
   * server CPU per send, and 100 concurrent sessions of small sends reach 0.59x the
   * throughput of hand-written Temporal code instead of 0.96x (`npm run bench:hotpath`).
   *
   * Off, the status follows the session, not its turns: `running` from start to close (a
   * turn running or not: the session's current details say which), `awaiting_approval` while
   * a person is asked, `cleaning_up`, `closed`; a send that asks nobody upserts nothing.
   * Set when a session starts; its later runs keep it.
   * @default false
   */
  turnStatus?: boolean;
  /**
   * How long one workflow task of a session may take before the server gives it to another
   * worker, ms: after a worker died holding a session's task, how long the session stalls.
   * Set when a session starts (later runs keep it). 2000 lets a session whose task was on a
   * worker that died resume within about 2 s instead of 10; but a task that really takes
   * longer (queued in a starved worker, a long replay) is timed out and retried from the
   * start, again and again under sustained overload, until an Update to the session fails
   * (seen here at load 29 on 2 cores, 100 concurrent sessions). Lower it only where workers
   * have CPU to spare.
   * @default 10000 (Temporal's default)
   */
  workflowTaskTimeoutMs?: number;
  /**
   * How a session's tasks find workers of its version.
   * - `'auto'` (the default): `'deployments'` where the server has Worker Deployments,
   *   otherwise `'off'`. The worker and the client each ask the server once when they start
   *   (DescribeWorkerDeployment of the agent's name: one RPC), so on one server they agree;
   *   `createAgent`'s client takes its worker's answer. One log line says what it came to and
   *   why: INFO, or WARN when the server has Worker Deployments disabled
   *   (`system.enableDeploymentVersions=false`). The time-skipping test server
   *   (`createHookTestEnv`'s default) has none: there it is `'off'`.
   * - `'deployments'`: Temporal's Worker Deployments. The worker polls as deployment version
   *   `<name>.<version>` (deployment name = agent name, build id = version), its sessions
   *   PINNED; `createSession` pins each new session to the client's own definition's
   *   version (a versioning override at start), so every workflow task, hook dispatch, model
   *   step and tool call of the session is routed by Temporal to workers of that version only,
   *   and a session moves only by `session.upgrade()`. Needs a server with Worker
   *   Deployments and `system.enableDeploymentVersions` on (the defaults of the provisioned
   *   dev server, 1.32; set explicitly by the embedded server and `deploy/dynamicconfig/`).
   * - `'off'`: unversioned workers; any worker of the task queue may take a task, and one of
   *   another version refuses it (`WORKER_VERSION_MISMATCH`), so the session retries it until
   *   a worker of its version takes it.
   *
   * Either way the worker checks every task's version before it runs it. Workers and clients
   * of one agent must come to the same mode: a client that pins while the workers poll
   * unversioned gets a `ConfigError` from `createSession` after 15 s (no worker of the
   * version registered); a client-only agent that does not pin while every worker of its task
   * queue polls as a Worker Deployment version gets one at once (the session would wait
   * forever).
   * @default 'auto'
   * @throws {ConfigError} at `createAgent` for anything else; at worker or client start for
   *   `'deployments'` on a server without Worker Deployments (naming the server settings), and
   *   for `'auto'` or `'deployments'` when the server's answer is neither yes nor no.
   */
  versioning?: 'auto' | 'deployments' | 'off';
  /**
   * The workflow bundle the worker runs, in place of the one shipped in the package.
   *
   * Not needed for a fast start: the package ships the bundle `npm run build` made
   * (`dist/workflow-bundle.js`), and a worker uses it when it matches the installed workflow
   * code (`agent.worker.workflowBundle` says which bundle ran and why). That bundle holds only
   * this package's workflow code: workflow interceptors, a custom payload or failure converter,
   * or bundler plugins need a bundle of your own, rebuilt whenever they or this package
   * change, e.g.
   * `await bundleWorkflowCode({ workflowsPath: agentWorkflowsPath(), workflowInterceptorModules: [...] })`
   * (`bundleWorkflowCode` from `@temporalio/worker`). It is used as given, unchecked.
   * @default the package's prebuilt bundle, else one bundled from the sources at startup
   */
  workflowBundle?: { code: string } | { codePath: string };
}
