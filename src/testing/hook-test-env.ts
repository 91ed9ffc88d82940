/**
 * `createHookTestEnv`: a real worker, client and Temporal server (its own time-skipping test
 * server by default) for one agent definition, which remembers the sessions it creates,
 * reads their histories as hook timelines and, at teardown, replays every one of them
 * against the current workflow code.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { ConfigError } from '../common/errors.js';
import { agentPayloadsOf, type AgentPayloads } from '../payloads/data-converter.js';
import { FaultInjector, type FaultHandle, type FaultTarget } from './faults.js';
import {
  fetchSubagentHistories,
  goldenFromHistories,
  writeGoldenSession,
  type GoldenSession,
} from './golden.js';
import type { HookEvent } from '../common/hook-events.js';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { connectClient, type AgentClient } from '../client/client.js';
import { timelineFromHistory } from '../history/timeline.js';
import type { HistoryTimeline } from '../history/timeline-types.js';
import { decodeHistoryPayloads } from '../history/decode.js';
import type { AgentOptions, ResolvedAgentOptions, SessionOptions } from '../definition/options.js';
import { resolveAgentOptions } from '../definition/resolve.js';
import type { DevServer } from '../server/dev-server.js';
import type { Session } from '../client/session.js';
import { startAgentWorker } from '../worker/worker.js';
import { RestartableWorker, WorkerKillSwitch } from './worker-kill.js';
import { fetchRunHistories } from '../history/files.js';
import { armAbort, armBudgetOverrun, armWorkerKill } from './env-faults.js';
import { teardownEnv } from './env-teardown.js';
import { startEnvServer, type EnvServer, type HookTestServerKind } from './env-server.js';
import { VirtualClock } from './virtual-clock.js';

/** Options of {@link createHookTestEnv}. */
export interface HookTestEnvOptions {
  /**
   * The agent definition under test, as given to `createAgent`. Its task queue is replaced by
   * a unique one, so envs never share workers. With `encryption` on, the env's histories,
   * timelines and golden sessions come decrypted (the server holds them sealed).
   */
  agent: AgentOptions;
  /**
   * The server the env starts for itself (and stops at teardown):
   * - `'time-skipping'`: Temporal's test server. Its clock moves with {@link HookTestEnv.sleep}:
   *   a one-day permission deadline or a ten-minute hook budget passes at once.
   * - `'dev'`: `temporal server start-dev` with its state in a temporary SQLite file, so
   *   {@link HookTestEnv.restartServer} keeps every session. Time is real.
   * Not allowed together with `address`.
   * @default `'time-skipping'`, unless an address is given
   */
  server?: 'time-skipping' | 'dev';
  /**
   * `host:port` of a running Temporal server to use instead of starting one (time is real,
   * the server is shared). `TEMPORAL_ADDRESS` is not read: pass it here to use it.
   * @default `agent.advanced.temporal.address`, else none (the env starts its own server)
   */
  address?: string;
  /**
   * Upper bound of each teardown step (fetching histories, replaying, stopping the worker,
   * the client and the server), ms.
   * @default 30000
   */
  teardownStepTimeoutMs?: number;
}

/** A session reference the env accepts: the `Session`, or its id. */
export type SessionRef = Session | string;

/** A running hook test environment. Get one from {@link createHookTestEnv}. */
export interface HookTestEnv {
  /** `host:port` of the Temporal server in use. */
  readonly address: string;
  /** Which server the env runs on (see {@link HookTestEnvOptions.server}). */
  readonly server: HookTestServerKind;
  /** The unique task queue of this env's worker. */
  readonly taskQueue: string;
  /** The embedded dev server, when the env started one (`server: 'dev'`). */
  readonly embeddedServer: DevServer | undefined;
  /**
   * Let time pass: `duration` in ms or a string such as `'10 minutes'` or `'1 day'`.
   * On the time-skipping server, the server's clock jumps (workflow timers due in that span
   * fire: permission deadlines, retries) and so does the clock hook and tool budgets run on
   * in this env's worker (a running dispatch past its budget times out now, with
   * `HOOK_TIMEOUT`, as it would in production). The jump waits for activities that are
   * running (a callback at work, a tool) to end first: the server never skips past a
   * running activity. Elsewhere it waits in real time.
   * @throws {TypeError} for a duration that does not parse; {RangeError} for a negative or
   *   infinite one; `Error` after teardown.
   */
  sleep(duration: Duration): Promise<void>;
  /** The server's clock, ms since the epoch (skipped time included). */
  currentTimeMs(): Promise<number>;
  /**
   * Stop the env's dev server and start it again on the same port and state; the worker and
   * client reconnect by themselves and sessions go on.
   * @throws {ConfigError} unless the env was created with `server: 'dev'`.
   */
  restartServer(): Promise<void>;
  /** The env's client (also usable for `client.session(id)` and the raw Temporal client). */
  readonly client: AgentClient;
  /** Sessions created through {@link HookTestEnv.createSession}, in creation order. */
  readonly sessions: ReadonlyArray<Session>;
  /**
   * Start a session of the agent under test (SessionStart has run when it resolves) and
   * remember it, so assertions accept it and `teardown()` replays it.
   * @throws what `AgentClient.createSession` throws; `Error` after teardown.
   */
  createSession(options?: SessionOptions): Promise<Session>;
  /**
   * The Temporal history of the session's newest run, as the server has it now.
   * @throws {Error} when the session was not created by this env, or after teardown.
   */
  history(session: SessionRef): Promise<History>;
  /**
   * The histories of every run of the session, oldest first: one per continue-as-new
   * (found by following each run's `continuedExecutionRunId`, not by a visibility query).
   * @throws {Error} when the session was not created by this env, or after teardown.
   */
  histories(session: SessionRef): Promise<History[]>;
  /**
   * The session's hook timeline rebuilt from its real histories (`timelineFromHistory`),
   * every run in order, `seq` counting across runs: one row per `dispatchHook` activity.
   * Events without callbacks are not dispatched, so they have no row. The status, marker
   * and result fields are the newest run's.
   * @throws {Error} when the session was not created by this env, or after teardown.
   */
  timeline(session: SessionRef): Promise<HistoryTimeline>;
  /**
   * Replay every session the env created against the current workflow code, then stop the
   * worker, the client and the embedded server (those are stopped even when a replay
   * fails). Sessions still open stay open on the server. Calling it again returns the same
   * promise.
   * @throws {Error} naming each session whose replay was nondeterministic (or failed), with
   *   the history event it stopped at and the hook dispatch or activity recorded there.
   */
  teardown(): Promise<void>;
  /**
   * Deliver an abort at a named event: when the `occurrence`-th dispatch of `event` (of
   * `toolName`, for tool events) reaches its first callback, the env calls
   * `session.abort(reason)` on that session and lets the callback run; its output is held
   * until the abort reached the dispatch (its `abortSignal` fired), so the abort always lands
   * mid-dispatch. An abort that stopped nothing (no prompt running, e.g. at SessionStart) is
   * not waited for. Acts on the agent definition's callbacks (an event without callbacks is
   * never dispatched, so it cannot be a target).
   * @throws {ConfigError} for an unknown event or a bad occurrence; `Error` after teardown.
   */
  abortAt(event: HookEvent, target?: FaultTarget & { reason?: unknown }): FaultHandle;
  /**
   * Resolves when the `occurrence`-th dispatch of `event` (of `toolName`, for tool events)
   * reaches its first callback: the dispatch is running and its budget is counting. Arm it
   * before the `send()` that leads there. Use it before {@link HookTestEnv.sleep} to let a
   * hung callback's budget pass. Acts on the agent definition's callbacks (an event without
   * callbacks is never dispatched, so it never resolves).
   * @throws {ConfigError} for an unknown event or a bad occurrence; `Error` after teardown.
   */
  whenDispatched(event: HookEvent, target?: FaultTarget): Promise<void>;
  /**
   * Kill the env's worker in the middle of a named event, and start a new one: when the
   * `occurrence`-th dispatch of `event` (of `toolName`) reaches its first callback, the
   * callback starts, then the worker dies as a killed process would (it stops polling, its
   * running activities never report back or heartbeat) and a new worker on the same task
   * queue takes over, replaying the session from history. The lost dispatch ends when its
   * heartbeat timeout (`advanced.temporal.dispatchHeartbeatTimeoutMs`, real time) passes:
   * `HOOK_WORKER_LOST`, outcome `worker_lost`, fail-closed as in production. The callback's
   * code itself keeps running in the test process; what it returns is dropped.
   * @throws {ConfigError} on the time-skipping server (it never moves a workflow task off a
   *   dead worker's sticky queue: use `server: 'dev'`), for an unknown event or a bad
   *   occurrence; `Error` after teardown.
   */
  killWorkerAt(event: HookEvent, target?: FaultTarget): FaultHandle;
  /** How many times the env's worker was killed (by {@link HookTestEnv.killWorkerAt}). */
  readonly workerKills: number;
  /**
   * Make a callback overrun its budget: at the `occurrence`-th dispatch of `event`, the
   * first callback runs, then holds its output until the budget has passed (its
   * `abortSignal` fired) plus `overrunMs` (default 200, real time). The dispatch fails with
   * `HOOK_TIMEOUT` and the session is fail-closed until the callback settles. On the
   * time-skipping server the budget passes at once (that dispatch's deadline fires now; other
   * budgets and the server's clock do not move); elsewhere it passes in real time.
   * @throws {ConfigError} for an unknown event or a bad occurrence; `Error` after teardown.
   */
  exceedBudgetAt(event: HookEvent, target?: FaultTarget & { overrunMs?: number }): FaultHandle;
  /**
   * Record the session as a golden session: every hook dispatch's input and decision, from
   * its histories (all runs) and its sub-agents' (the sessions its `Task` calls started),
   * written to `file` as JSON when given (its folder is created when missing). Check it
   * later with `checkGoldenSession` / `assertGoldenSession` or `durable-agent golden`.
   * @throws {Error} when the session was not created by this env, or after teardown.
   */
  recordGolden(session: SessionRef, file?: string): Promise<GoldenSession>;
}

const DEFAULT_STEP_TIMEOUT_MS = 30_000;

/**
 * Start a hook test environment for one agent definition: a worker on a unique task queue,
 * a client, and a server: its own time-skipping test server (default), its own dev server
 * (`server: 'dev'`), or a running one (`address`).
 *
 * @example
 * ```ts
 * const env = await createHookTestEnv({ agent: { model: scriptedModel([...]), advanced: { hooks } } });
 * const session = await env.createSession();
 * await session.send('clean up');
 * await assertDecision(env, session, { event: 'PreToolUse', toolName: 'Bash', action: 'abort' });
 * await env.teardown(); // replays every session: throws on nondeterminism
 * ```
 * @throws {ConfigError} for bad agent options, an unknown `server`, or `server` together
 *   with `address`, before anything starts.
 * @throws {EngineError} `TEMPORAL_TEST_SERVER_UNAVAILABLE` when no test server binary is
 *   found; `TEMPORAL_SERVER_START_FAILED` (and the CLI provisioning codes) when a server the
 *   env starts does not start.
 */
export async function createHookTestEnv(options: HookTestEnvOptions): Promise<HookTestEnv> {
  const agent = options.agent;
  if (!agent || typeof agent !== 'object') {
    throw new ConfigError('createHookTestEnv: options.agent (the agent definition) is required');
  }
  const taskQueue = `hook-test-${randomUUID()}`;
  const stepTimeoutMs = options.teardownStepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  const faults = new FaultInjector();
  const merged = (address: string | undefined): AgentOptions => ({
    ...agent,
    advanced: {
      ...agent.advanced,
      ...(agent.advanced?.hooks ? { hooks: faults.wrap(agent.advanced.hooks) } : {}),
      temporal: {
        ...agent.advanced?.temporal,
        ...(address ? { address } : {}),
        taskQueue,
      },
    },
  });
  const address = options.address ?? agent.advanced?.temporal?.address;
  // Validate first (throws ConfigError) with a placeholder address, before any server starts.
  resolveAgentOptions(merged(address ?? '127.0.0.1:7233'));
  const server = await startEnvServer({
    server: options.server,
    address,
    cacheDir: agent.advanced?.temporal?.embedded?.cacheDir,
  });
  const resolved = resolveAgentOptions(merged(server.address));
  const clock = server.kind === 'time-skipping' ? new VirtualClock() : undefined;
  const { workers, client } = await startWorkerAndClient(resolved, server, clock);
  return assembleEnv({
    taskQueue,
    server,
    clock,
    workers,
    client,
    stepTimeoutMs,
    payloads: await agentPayloadsOf(resolved),
    faults,
  });
}

/** The env's (restartable) worker and its client; the server is stopped when either fails. */
async function startWorkerAndClient(
  resolved: ResolvedAgentOptions,
  server: EnvServer,
  clock: VirtualClock | undefined,
): Promise<{ workers: RestartableWorker; client: AgentClient }> {
  let workers: RestartableWorker | undefined;
  try {
    workers = await RestartableWorker.start(async (registry) => {
      const killSwitch = new WorkerKillSwitch();
      const worker = await startAgentWorker(resolved, server.address, {
        ...(clock ? { clock } : {}),
        ...(registry ? { registry } : {}),
        activityInterceptors: [killSwitch.interceptor],
        // A callback that never settles cannot hold teardown (or a killed worker) forever.
        shutdownForceTimeMs: resolved.temporal.shutdownGraceTimeMs + 2_000,
      });
      return { worker, killSwitch };
    });
    // The worker's registry makes per-session hooks (`createSession({ hooks })`) work.
    const client = await connectClient(
      server.address,
      resolved,
      workers.registry,
      workers.versioning,
    );
    return { workers, client };
  } catch (error) {
    await workers?.shutdown().catch(() => undefined);
    await server.stop();
    throw error;
  }
}

interface EnvParts {
  taskQueue: string;
  server: EnvServer;
  clock: VirtualClock | undefined;
  workers: RestartableWorker;
  client: AgentClient;
  stepTimeoutMs: number;
  payloads: AgentPayloads;
  faults: FaultInjector;
}

/** An env's parts and what it keeps: the sessions it created, and its teardown once begun. */
interface EnvState extends EnvParts {
  readonly sessions: Map<string, Session>;
  torndown: Promise<void> | undefined;
}

function assembleEnv(parts: EnvParts): HookTestEnv {
  const state: EnvState = { ...parts, sessions: new Map(), torndown: undefined };
  const { taskQueue, server, clock, workers, client, faults, sessions } = state;
  const live = () => assertLive(state);
  return {
    address: server.address,
    server: server.kind,
    taskQueue,
    get embeddedServer() {
      return server.devServer;
    },
    async sleep(duration) {
      await sleepEnv(state, duration);
    },
    async currentTimeMs() {
      live();
      return server.currentTimeMs();
    },
    async restartServer() {
      live();
      await server.restart();
    },
    get client() {
      live();
      return client;
    },
    get sessions() {
      return [...sessions.values()];
    },
    async createSession(sessionOptions) {
      live();
      const session = await client.createSession(sessionOptions);
      sessions.set(session.id, session);
      return session;
    },
    async history(ref) {
      return fetchHistory(state, ownSession(state, ref));
    },
    async histories(ref) {
      return fetchHistories(state, ownSession(state, ref));
    },
    async timeline(ref) {
      return sessionTimeline(state, ownSession(state, ref));
    },
    teardown() {
      state.torndown ??= teardownEnv({
        sessions,
        client,
        workers,
        server,
        stepTimeoutMs: state.stepTimeoutMs,
        dataConverter: state.payloads.dataConverter,
      });
      return state.torndown;
    },
    recordGolden: (ref, file) => recordGolden(state, ref, file),
    get workerKills() {
      return workers.kills;
    },
    killWorkerAt: (event, target = {}) => killWorkerAt(state, event, target),
    whenDispatched(event, target = {}) {
      live();
      return faults.arm(event, target, (input, original) => original(input)).fired;
    },
    abortAt(event, target = {}) {
      live();
      return armAbort(faults, sessions, event, target);
    },
    exceedBudgetAt(event, target = {}) {
      live();
      return armBudgetOverrun(faults, clock, event, target);
    },
  };
}

/** @see HookTestEnv.sleep */
async function sleepEnv(state: EnvState, duration: Duration): Promise<void> {
  assertLive(state);
  const ms = msToNumber(duration);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(
      `env.sleep: the duration must be a finite time of 0 or more, got ${JSON.stringify(duration)}`,
    );
  }
  state.clock?.advance(ms);
  await state.server.sleep(ms);
}

/** @throws {Error} once the env's teardown has begun. */
function assertLive(state: EnvState): void {
  if (state.torndown) throw new Error('HookTestEnv used after teardown');
}

/** @throws {Error} when `ref` names no session this env created, or after teardown. */
function ownSession(state: EnvState, ref: SessionRef): Session {
  assertLive(state);
  const id = typeof ref === 'string' ? ref : ref?.id;
  const session = typeof id === 'string' ? state.sessions.get(id) : undefined;
  if (!session) {
    const known = [...state.sessions.keys()];
    throw new Error(
      `Session ${JSON.stringify(id)} was not created by this HookTestEnv ` +
        `(its sessions: ${known.length ? known.join(', ') : 'none'}); create it with env.createSession()`,
    );
  }
  return session;
}

/** A history as the env hands it out: opened, when the agent encrypts. */
function opened(state: EnvState, history: History): Promise<History> {
  const { encryption } = state.payloads;
  return encryption ? decodeHistoryPayloads(history, [encryption]) : Promise.resolve(history);
}

async function fetchHistory(state: EnvState, session: Session): Promise<History> {
  const handle = state.client.temporal.workflow.getHandle(session.workflowId);
  return opened(state, await handle.fetchHistory());
}

/** {@link HookTestEnv.recordGolden}: the session's dispatches and its sub-agents'. */
async function recordGolden(state: EnvState, ref: SessionRef, file?: string) {
  const session = ownSession(state, ref);
  const histories = await fetchHistories(state, session);
  const subagents = await fetchSubagentHistories(histories, (id) => workflowRuns(state, id));
  const golden = goldenFromHistories(session.id, histories, subagents);
  if (file !== undefined) writeGoldenSession(file, golden);
  return golden;
}

/** Every run's history, oldest first, following the continue-as-new chain backwards. */
async function fetchHistories(state: EnvState, session: Session): Promise<History[]> {
  return workflowRuns(state, session.workflowId);
}

/** Every run's history of a workflow (a session's, or a sub-agent's), decrypted. */
async function workflowRuns(state: EnvState, workflowId: string): Promise<History[]> {
  const runs = await fetchRunHistories(state.client.temporal, workflowId);
  return Promise.all(runs.map((run) => opened(state, run)));
}

/** The session's timeline over all its runs: the newest run's, with every run's dispatches. */
async function sessionTimeline(state: EnvState, session: Session): Promise<HistoryTimeline> {
  const runs = (await fetchHistories(state, session)).map((h) => timelineFromHistory(h));
  const newest = runs.at(-1)!;
  const dispatches = runs
    .flatMap((run) => run.dispatches)
    .map((dispatch, seq) => ({ ...dispatch, seq }));
  return { ...newest, dispatches };
}

/** @see HookTestEnv.killWorkerAt */
function killWorkerAt(state: EnvState, event: HookEvent, target: FaultTarget): FaultHandle {
  assertLive(state);
  if (state.server.kind === 'time-skipping') {
    // Its next workflow tasks would wait on the dead worker's sticky queue forever: the
    // test server neither times them out to the shared queue nor resets stickiness.
    throw new ConfigError(
      "killWorkerAt needs server: 'dev' (or an address): Temporal's time-skipping test server " +
        "never moves a session's next workflow task off a dead worker's sticky queue",
    );
  }
  return armWorkerKill(state.faults, state.workers, event, target);
}
