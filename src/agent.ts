/**
 * `createAgent`: the all-in-one agent (a worker and a client in this process, and an
 * embedded Temporal server when none is configured), plus the worker-only and client-only
 * halves of the same definition.
 *
 * @module
 */
import { ConfigError } from './common/errors.js';
import type { CloseResult } from './common/protocol.js';
import type { Prompt } from './common/types.js';
import { connectClient, type AgentClient, type SessionSummary } from './client.js';
import { resolveEndpoint, type TemporalEndpoint } from './endpoint.js';
import { resolveModel } from './models/resolve.js';
import type { DevServer } from './server/dev-server.js';
import { resolveAgentOptions, type AgentOptions, type SessionOptions } from './options.js';
import type { Session, SendOptions, SendResponse } from './session.js';
import { startAgentWorker, type AgentWorker } from './worker.js';

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
   */
  send(prompt: Prompt, options?: SendOptions): Promise<SendResponse>;
  /** @see AgentClient.createSession */
  createSession(options?: SessionOptions): Promise<Session>;
  /** @see AgentClient.session */
  session(sessionId: string): Promise<Session>;
  /** @see AgentClient.listSessions */
  listSessions(options?: { limit?: number }): Promise<SessionSummary[]>;
  /**
   * Close the default session (SessionEnd runs once) if `send()` opened one, then stop the
   * worker, the client and the embedded server. Other sessions stay open and durable.
   */
  close(): Promise<CloseResult | undefined>;
  /** Stop the worker, client and embedded server without closing any session. */
  shutdown(): Promise<void>;
}

/**
 * Create an agent: validate the options, reach (or start) Temporal, start a worker and a
 * client in this process.
 *
 * @throws {ConfigError} for bad options (e.g. `hookTimeoutMs: 0`), or a model id whose
 *   provider needs an API key that neither `apiKey` nor its environment variable gives
 *   (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), before anything starts.
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
    client = await connectClient(endpoint.address, resolved, worker.registry);
  } catch (error) {
    await worker?.shutdown();
    await endpoint.server?.stop();
    throw error;
  }
  return assemble(endpoint, worker, client);
}

function assemble(endpoint: TemporalEndpoint, worker: AgentWorker, client: AgentClient): Agent {
  let defaultSession: Promise<Session> | undefined;
  let stopped: Promise<void> | undefined;
  const shutdown = () => {
    stopped ??= (async () => {
      await client.close().catch(() => undefined);
      await worker.shutdown();
      await endpoint.server?.stop();
    })();
    return stopped;
  };
  return {
    address: endpoint.address,
    uiUrl: endpoint.server?.uiUrl,
    embeddedServer: endpoint.server,
    worker,
    client,
    async send(prompt, sendOptions) {
      defaultSession ??= client.createSession();
      defaultSession.catch(() => (defaultSession = undefined));
      return (await defaultSession).send(prompt, sendOptions);
    },
    createSession: (sessionOptions) => client.createSession(sessionOptions),
    session: (sessionId) => client.session(sessionId),
    listSessions: (listOptions) => client.listSessions(listOptions),
    async close() {
      try {
        if (!defaultSession) return undefined;
        return await (await defaultSession).close();
      } finally {
        await shutdown();
      }
    },
    shutdown,
  };
}

/**
 * Run only the worker half of an agent definition: one of a fleet on the same task queue.
 * Needs `advanced.temporal.address` or `TEMPORAL_ADDRESS`, and the model's API key (as
 * `createAgent` does).
 * @throws {ConfigError} for bad options, no Temporal address, or a missing API key.
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
 * @throws {ConfigError} for bad options or no Temporal address.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` or `NAMESPACE_NOT_FOUND`.
 */
export async function createAgentClient(options: AgentOptions): Promise<AgentClient> {
  const resolved = resolveAgentOptions(options);
  if (!resolved.temporal.address) {
    throw new ConfigError('createAgentClient needs advanced.temporal.address or TEMPORAL_ADDRESS');
  }
  return connectClient(resolved.temporal.address, resolved);
}
