/**
 * What a worker runs on: its connection to Temporal (errors mapped to the package's) and the
 * process's Temporal runtime, whose logger routes every line to its worker's sink.
 *
 * @module
 */
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { TemporalPlugin } from '../definition/options.js';
import {
  AGENT_CONNECTION_HINTS,
  checkNamespace,
  diagnoseTls,
  grpcSecurity,
  temporalTlsFailed,
  type ConnectionSecurity,
  probeReachable,
  temporalUnreachable,
  transportReason,
} from '../temporal/connection.js';
import { RoutingLogger, resolveLogLevel, type AgentLogLevel } from '../temporal/logging.js';

/**
 * The worker's native connection, its errors mapped: a refused port or unknown host is
 * `TEMPORAL_UNREACHABLE` (the core's `tonic::transport::Error` stays the cause), a missing
 * namespace `NAMESPACE_NOT_FOUND`, checked here before `Worker.create` would fail on it.
 */
export async function connectWorker(
  address: string,
  namespace: string,
  security: ConnectionSecurity,
  plugins: TemporalPlugin[],
): Promise<NativeConnection> {
  await probeReachable(address, namespace, AGENT_CONNECTION_HINTS);
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({
      address,
      ...grpcSecurity(security),
      ...(plugins.length > 0 ? { plugins } : {}),
    });
  } catch (error) {
    // The port accepted TCP (the probe): whether TLS is the cause, with a handshake of ours.
    const tlsReason = await diagnoseTls(address, security.tls, AGENT_CONNECTION_HINTS);
    if (tlsReason) throw temporalTlsFailed(address, namespace, tlsReason, error);
    throw temporalUnreachable(
      address,
      namespace,
      transportReason(error),
      AGENT_CONNECTION_HINTS,
      error,
    );
  }
  try {
    await checkNamespace(connection.workflowService, address, namespace, AGENT_CONNECTION_HINTS);
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  return connection;
}

let runtimeLogger: RoutingLogger | undefined;

/**
 * The level of the core's dependencies (gRPC, HTTP/2 framing): as asked at WARN, ERROR and
 * TRACE, else WARN, so DEBUG shows Temporal's detail rather than every HTTP/2 frame.
 */
function transportLevel(level: AgentLogLevel): AgentLogLevel {
  return level === 'DEBUG' || level === 'INFO' ? 'WARN' : level;
}

/**
 * Install, once per process, a Temporal runtime whose logger is a {@link RoutingLogger}:
 * every worker's, activity's and workflow's line (and the core's own, forwarded) goes to
 * the sink of its worker, one line each, at the worker's level. The core's own lines are
 * filtered at the level of the first call in the process (`level`, default
 * `DURABLE_AGENT_LOG_LEVEL`, else WARN). When the application installed a runtime first,
 * `Runtime.install` throws and theirs stays: Temporal's lines then go to its logger, and
 * this returns undefined. Temporal shuts a runtime down once no worker or connection uses
 * it, so this installs again (with the same logger) after one went; the worker skips it
 * with `advanced.temporal.runtime: 'never'`.
 *
 * @throws {ConfigError} when `DURABLE_AGENT_LOG_LEVEL` is set to something that is not a level.
 */
export function installQuietRuntime(level?: AgentLogLevel): RoutingLogger | undefined {
  const threshold = level ?? resolveLogLevel(undefined);
  const logger = (runtimeLogger ??= new RoutingLogger(threshold));
  try {
    Runtime.install({
      logger,
      telemetryOptions: {
        logging: { filter: { core: threshold, other: transportLevel(threshold) }, forward: {} },
      },
    });
  } catch {
    // A runtime exists: ours (a worker of this process still runs on it), or the
    // application's, which stays (and gets Temporal's lines). Temporal shuts a runtime
    // down once no worker or connection uses it, so ours may have gone and theirs come.
    return Runtime.instance().logger === logger ? logger : undefined;
  }
  return logger;
}
