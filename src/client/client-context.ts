/**
 * The context record of one client: its connection, options and parts, and the Temporal
 * client built on them. The client's functions (starting and attaching sessions, version
 * routing) take it instead of closing over it.
 *
 * @module
 */
import { Client, type Connection } from '@temporalio/client';
import type { ResolvedAgentOptions } from '../definition/options.js';
import type { AgentRegistry } from '../definition/registry.js';
import type { AgentPayloads } from '../payloads/data-converter.js';
import { sharedStreams } from '../stream/memory.js';
import type { StreamTransport } from '../stream/transport.js';
import type { VersioningMode } from '../temporal/versioning.js';
import type { AgentTracing } from '../tracing/tracing.js';
import { ClientCalls } from './client-calls.js';
import { sessionSearchAttributes, type SessionSearchAttributes } from './search-attributes.js';
import type { VersionRouting } from './version-routing.js';

/** What the functions of one client share. */
export interface ClientContext {
  readonly connection: Connection;
  readonly options: ResolvedAgentOptions;
  readonly payloads: AgentPayloads;
  readonly registry: AgentRegistry | undefined;
  readonly tracing: AgentTracing | undefined;
  /** The client's calls in flight, and the order of its sends. */
  readonly calls: ClientCalls;
  /** The send streams, when streaming is on. */
  readonly streams: StreamTransport | undefined;
  /** The Temporal client on `connection`. */
  readonly client: Client;
  readonly routing: VersionRouting;
  readonly searchAttributes: SessionSearchAttributes;
}

/** The context of a client on an open connection. */
export function clientContextOn(
  connection: Connection,
  options: ResolvedAgentOptions,
  payloads: AgentPayloads,
  registry: AgentRegistry | undefined,
  tracing: AgentTracing | undefined,
  versioning: VersioningMode,
): ClientContext {
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
  const routing: VersionRouting = {
    client,
    options,
    registry,
    deployments: versioning === 'deployments',
    served: undefined,
    unpinnedChecked: false,
  };
  const searchAttributes = sessionSearchAttributes({
    namespace: options.temporal.namespace,
    agentName: options.name,
    version: options.version,
    logger: options.logger,
    logLevel: options.logLevel,
  });
  return {
    connection,
    options,
    payloads,
    registry,
    tracing,
    calls,
    streams,
    client,
    routing,
    searchAttributes,
  };
}
