/**
 * `createAgent`: the all-in-one agent (a worker and a client in this process, and an
 * embedded Temporal server when none is configured), plus the worker-only and client-only
 * halves of the same definition.
 *
 * @module
 */
import { ConfigError, EngineError, SessionClosedError } from '../common/errors.js';
import type { CloseResult } from '../common/messages.js';
import type { Prompt } from '../common/types.js';
import { clientCallsOf, connectClient, type AgentClient } from '../client/client.js';
import type { SessionSummary } from '../client/list-sessions.js';
import { resolveEndpoint, type TemporalEndpoint } from './endpoint.js';
import { resolveModel } from '../models/resolve.js';
import type { DevServer } from '../server/dev-server.js';
import type { AgentOptions, SessionOptions } from '../definition/options.js';
import { resolveAgentOptions } from '../definition/resolve.js';
import type { Session } from '../client/session.js';
import type { SendOptions, SendResponse } from '../client/send-response.js';
import { startAgentWorker, type AgentWorker } from '../worker/worker.js';

/** An agent with its worker, client and (maybe) embedded server. */
export interface Agent {
  /** `host:port` of the Temporal server in use. */
  readonly address: string;
  /** The Web UI's URL when an embedded server runs with `ui: true`. */
  readonly uiUrl: string | undefined;
  /** The embedded dev server, when the agent started one. */
  readonly embeddedServer: DevServer | undefined;
  /** The worker running in this process. */
  readonly worker: AgentWorker;
  /** The client of this process. */
  readonly client: AgentClient;
  /**
   * Send a prompt to the agent's default session (created on first use).
   * @see Session.send for what it throws.
   * @throws {SessionClosedError} after `close()` closed the default session.
   * @throws {EngineError} `ENGINE_ERROR` after `shutdown()`, or after `close()` of an agent
   *   that had no default session.
   */
  send(prompt: Prompt, options?: SendOptions): Promise<SendResponse>;
  /**
   * Start a session, or attach to the running one with the same `sessionId`, through this
   * agent's client.
   * @see AgentClient.createSession
   * @throws {EngineError} `ENGINE_ERROR` once the agent was closed or shut down.
   */
  createSession(options?: SessionOptions): Promise<Session>;
  /**
   * A handle on an existing session, through this agent's client.
   * @see AgentClient.session
   * @throws {EngineError} `ENGINE_ERROR` once the agent was closed or shut down.
   */
  session(sessionId: string): Promise<Session>;
  /**
   * Sessions of this namespace, newest first, through this agent's client.
   * @see AgentClient.listSessions
   * @throws {EngineError} `ENGINE_ERROR` once the agent was closed or shut down.
   */
  listSessions(options?: { limit?: number }): Promise<SessionSummary[]>;
  /**
   * Close the agent: close the default session if `send()` opened one (as
   * {@link Session.close}: SessionEnd runs once), then stop the worker, the client and the
   * embedded server. Other sessions stay open and durable.
   *
   * Only a close that closed stops anything. A refused close (the default session's
   * `close()` rejected: `HOOK_CLEANUP_PENDING` while a cancelled callback cleans up, or
   * SessionEnd threw or timed out) leaves the agent running and the session open: `send()`
   * works, and calling `close()` again closes the session (without calling SessionEnd again
   * when it already ran and failed) and then stops the agent.
   *
   * @returns the default session's {@link CloseResult}; `undefined` when `send()` never
   *   opened a default session (the agent stops all the same, and no session is touched).
   *   `close()` again, or concurrently with a close in flight, shares that outcome: it
   *   resolves with `closedNow: false, sessionEndRan: false` (or `undefined`) once the agent
   *   has stopped, or rejects with the same error.
   * @throws {HookError} what the default session's `close()` threw; nothing was stopped.
   * @throws {EngineError} `ENGINE_ERROR` after `shutdown()` when a default session is open:
   *   it can no longer be reached from this agent (close it with `session(id).close()` from
   *   another client).
   */
  close(): Promise<CloseResult | undefined>;
  /**
   * Stop the worker, client and embedded server without closing any session. Idempotent;
   * `close()` after it closes nothing.
   */
  shutdown(): Promise<void>;
}

/**
 * Create an agent: validate the options, reach (or start) Temporal, start a worker and a
 * client in this process.
 *
 * @throws {ConfigError} for bad options (e.g. `hookTimeoutMs: 0`), or a model id whose
 *   provider needs an API key that neither `apiKey` nor its environment variable gives
 *   (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), before anything starts; for
 *   `advanced.temporal.versioning: 'deployments'` on a server without Worker Deployments.
 * @throws {EngineError} when the embedded server cannot be provisioned or started.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` when nothing answers at the
 *   configured address, `NAMESPACE_NOT_FOUND` when its server has no such namespace.
 */
export async function createAgent(options: AgentOptions): Promise<Agent> {
  const resolved = resolveAgentOptions(options);
  // Before any server starts: a model id without its API key is a ConfigError now.
  const model = resolveModel(resolved);
  const endpoint = await resolveEndpoint(resolved);
  let worker: AgentWorker | undefined;
  let client: AgentClient | undefined;
  try {
    worker = await startAgentWorker(resolved, endpoint.address, { model });
    // The worker's routing, so the two never disagree (and the server is asked once).
    client = await connectClient(endpoint.address, resolved, worker.registry, worker.versioning);
  } catch (error) {
    await worker?.shutdown();
    await endpoint.server?.stop();
    throw error;
  }
  return assemble(endpoint, worker, client);
}

/** How long a close that closed the default session waits for its other calls to end, ms. */
const CLOSE_CALLS_GRACE_MS = 5_000;

/** What a running agent holds: its parts, its default session and how far it has stopped. */
interface AgentState {
  readonly endpoint: TemporalEndpoint;
  readonly worker: AgentWorker;
  readonly client: AgentClient;
  defaultSession: Promise<Session> | undefined;
  stopped: Promise<void> | undefined;
  /** The close in flight, which concurrent `close()` calls share. */
  closing: Promise<CloseResult | undefined> | undefined;
  /** Set once a close closed (or found closed) the default session, or found none. */
  closed: { result: CloseResult | undefined; sessionId: string | undefined } | undefined;
}

function assemble(endpoint: TemporalEndpoint, worker: AgentWorker, client: AgentClient): Agent {
  const state: AgentState = {
    endpoint,
    worker,
    client,
    defaultSession: undefined,
    stopped: undefined,
    closing: undefined,
    closed: undefined,
  };
  return {
    address: endpoint.address,
    uiUrl: endpoint.server?.uiUrl,
    embeddedServer: endpoint.server,
    worker,
    client,
    send: (prompt, sendOptions) => sendToDefaultSession(state, prompt, sendOptions),
    createSession: async (sessionOptions) => {
      assertRunning(state, 'createSession');
      return client.createSession(sessionOptions);
    },
    session: async (sessionId) => {
      assertRunning(state, 'session');
      return client.session(sessionId);
    },
    listSessions: async (listOptions) => {
      assertRunning(state, 'listSessions');
      return client.listSessions(listOptions);
    },
    close: () => closeAgent(state),
    shutdown: () => shutdownAgent(state),
  };
}

/** Stop the client, the worker and the embedded server, once. */
function shutdownAgent(state: AgentState): Promise<void> {
  state.stopped ??= (async () => {
    await state.client.close().catch(() => undefined);
    await state.worker.shutdown();
    await state.endpoint.server?.stop();
  })();
  return state.stopped;
}

/** Throw the error a call on a closed or shut-down agent gets. */
function assertRunning(state: AgentState, what: string): void {
  if (!state.stopped) return;
  const { closed } = state;
  if (closed?.sessionId !== undefined && what === 'send') {
    throw new SessionClosedError(closed.sessionId);
  }
  throw new EngineError(
    'ENGINE_ERROR',
    `agent.${what}(): the agent was ${closed ? 'closed' : 'shut down'}; create a new agent`,
  );
}

async function sendToDefaultSession(
  state: AgentState,
  prompt: Prompt,
  sendOptions: SendOptions | undefined,
): Promise<SendResponse> {
  assertRunning(state, 'send');
  state.defaultSession ??= state.client.createSession();
  state.defaultSession.catch(() => (state.defaultSession = undefined));
  return (await state.defaultSession).send(prompt, sendOptions);
}

async function defaultSessionOrNone(state: AgentState): Promise<Session | undefined> {
  return state.defaultSession?.catch(() => undefined);
}

/** @see Agent.close */
async function closeAgent(state: AgentState): Promise<CloseResult | undefined> {
  if (state.closing) return alreadyClosed(await state.closing);
  if (state.closed) {
    await shutdownAgent(state);
    return alreadyClosed(state.closed.result);
  }
  if (state.stopped) {
    // shutdown() came first: the default session, if any, stays open on the server.
    const session = await defaultSessionOrNone(state);
    if (!session) return undefined;
    throw new EngineError(
      'ENGINE_ERROR',
      `agent.close(): the agent was shut down before its default session '${session.id}' ` +
        `was closed; close it from another client: session('${session.id}').close()`,
    );
  }
  const attempt = closeOnce(state);
  state.closing = attempt;
  try {
    return await attempt;
  } finally {
    state.closing = undefined;
  }
}

/** Close the default session (if any), then stop the agent. */
async function closeOnce(state: AgentState): Promise<CloseResult | undefined> {
  const session = await defaultSessionOrNone(state);
  // Rejects (nothing stopped) when the session refuses to close.
  const result = session ? await session.close() : undefined;
  state.closed = { result, sessionId: session?.id };
  // The session's send()s were answered as it closed: let their replies arrive before
  // the client goes.
  if (session) await clientCallsOf(state.client)?.quiet(session.workflowId, CLOSE_CALLS_GRACE_MS);
  await shutdownAgent(state);
  return result;
}

/** What a close that found the session already closed reports. */
function alreadyClosed(result: CloseResult | undefined): CloseResult | undefined {
  return result && { ...result, closedNow: false, sessionEndRan: false };
}

/**
 * Run only the worker half of an agent definition: one of a fleet on the same task queue.
 * Needs `advanced.temporal.address` or `TEMPORAL_ADDRESS`, and the model's API key (as
 * `createAgent` does).
 * @throws {ConfigError} for bad options, no Temporal address, a missing API key, or
 *   `advanced.temporal.versioning: 'deployments'` on a server without Worker Deployments.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` or `NAMESPACE_NOT_FOUND`.
 */
export async function createAgentWorker(options: AgentOptions): Promise<AgentWorker> {
  const resolved = resolveAgentOptions(options);
  if (!resolved.temporal.address) {
    throw new ConfigError('createAgentWorker needs advanced.temporal.address or TEMPORAL_ADDRESS');
  }
  return startAgentWorker(resolved, resolved.temporal.address);
}

/**
 * Run only the client half: start and drive sessions without running hooks (they run on
 * the workers). The definition must match the workers' (same hooks per event, same name).
 * It never runs the model, so a model id needs no API key here.
 * It resolves `advanced.temporal.versioning` against the server as its workers do (`'auto'`:
 * pinned sessions where the server has Worker Deployments).
 * @throws {ConfigError} for bad options, no Temporal address, or
 *   `advanced.temporal.versioning: 'deployments'` on a server without Worker Deployments.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` or `NAMESPACE_NOT_FOUND`.
 */
export async function createAgentClient(options: AgentOptions): Promise<AgentClient> {
  const resolved = resolveAgentOptions(options);
  if (!resolved.temporal.address) {
    throw new ConfigError('createAgentClient needs advanced.temporal.address or TEMPORAL_ADDRESS');
  }
  return connectClient(resolved.temporal.address, resolved);
}
