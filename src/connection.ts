/**
 * Connecting to Temporal with errors a user can act on: a refused port, an unknown host or a
 * namespace the server does not have becomes one {@link TemporalConnectionError} naming
 * the address, the namespace and what to check, instead of the transport's own error
 * (`tonic::transport::Error(...)`, `Failed to connect before the deadline`, a status with
 * protobuf bytes), which stays the `cause`.
 *
 * Client side only (`@temporalio/client`); the worker maps its native connection's errors
 * with the same builders.
 *
 * @module
 */
import { connect as tcpConnect } from 'node:net';
import { Connection } from '@temporalio/client';
import { TemporalConnectionError, messageOf } from './common/errors.js';
import { cutPrefix } from './common/text.js';

/** Where a user sets the address and the namespace, as the messages should name it. */
export interface ConnectionHints {
  /** e.g. `advanced.temporal.address or TEMPORAL_ADDRESS`. */
  address: string;
  /** e.g. `advanced.temporal.namespace or TEMPORAL_NAMESPACE`. */
  namespace: string;
  /** Say that leaving the address unset starts an embedded dev server (createAgent). */
  embedded?: boolean;
}

/** The hints of `createAgent`, `createAgentWorker` and `createAgentClient`. */
export const AGENT_CONNECTION_HINTS: ConnectionHints = {
  address: 'advanced.temporal.address or TEMPORAL_ADDRESS',
  namespace: 'advanced.temporal.namespace or TEMPORAL_NAMESPACE',
  embedded: true,
};

/** Temporal's default frontend port, for an address without one. */
const DEFAULT_PORT = 7233;

/** How long the TCP probe that explains a failed connect waits, ms. */
const PROBE_TIMEOUT_MS = 2_000;

const REFUSED = 'connection refused (nothing listens on that port)';

/** A `TEMPORAL_UNREACHABLE` error: nothing usable answered at `address`. */
export function temporalUnreachable(
  address: string,
  namespace: string,
  reason: string,
  hints: ConnectionHints,
  cause?: unknown,
): TemporalConnectionError {
  return new TemporalConnectionError(
    'TEMPORAL_UNREACHABLE',
    `Cannot reach Temporal at ${address} (namespace '${namespace}'): ${reason}. ` +
      'Check that a Temporal server runs there (`temporal server start-dev`, or ' +
      `\`docker compose up -d\`) and that ${hints.address} names its frontend ` +
      `(host:port, port ${DEFAULT_PORT} by default)` +
      (hints.embedded ? '; with neither set, createAgent starts an embedded dev server' : '') +
      '.',
    { address, namespace, reason, cause },
  );
}

/** A `NAMESPACE_NOT_FOUND` error: the server at `address` has no `namespace`. */
export function namespaceNotFound(
  address: string,
  namespace: string,
  hints: ConnectionHints,
  cause?: unknown,
): TemporalConnectionError {
  return new TemporalConnectionError(
    'NAMESPACE_NOT_FOUND',
    `Namespace '${namespace}' not found on the Temporal server at ${address}. Check ` +
      `${hints.namespace}, or create it: \`temporal operator namespace create --namespace ` +
      `${namespace} --address ${address}\` (a dev server: \`temporal server start-dev ` +
      `--namespace ${namespace}\`).`,
    { address, namespace, reason: 'the namespace does not exist', cause },
  );
}

/**
 * What a native (Rust core) transport error means, in a few words: the worker's
 * `NativeConnection.connect` reports `tonic::transport::Error(...)` texts.
 */
export function transportReason(error: unknown): string {
  const text = messageOf(error);
  if (/ConnectionRefused|Connection refused/i.test(text)) return REFUSED;
  if (/dns error|failed to lookup address|Name or service not known/i.test(text)) {
    return 'unknown host (the name does not resolve)';
  }
  if (/HostUnreachable|NetworkUnreachable|No route to host/i.test(text)) {
    return 'host unreachable (no route to it)';
  }
  if (/timed out|TimedOut|TimeoutExpired|deadline/i.test(text)) {
    return 'no answer (the connection timed out: a firewall, or a wrong host or port)';
  }
  // The port answered, but not as an HTTP/2 gRPC server (an HTTP server, a metrics port).
  if (
    /GoAway|FRAME_SIZE_ERROR|BrokenPipe|ConnectionReset|Http2|invalid HTTP|h2 protocol/i.test(text)
  ) {
    return "the port answers, but not with Temporal's gRPC (another service on that port? the SDK connects without TLS)";
  }
  return `transport error: ${clip(text)}`;
}

/** Whether `error` is the server's "namespace not found" (gRPC NOT_FOUND on a namespace call). */
export function isNamespaceNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown } | undefined;
  const text = messageOf(error);
  return (
    e?.name === 'NamespaceNotFoundError' ||
    /Namespace .* (is not found|was not found|not found)/i.test(text) ||
    (e?.code === 5 && /namespace/i.test(text))
  );
}

/**
 * Check that the server has `namespace`, through a `DescribeNamespace` call.
 * Only a NOT_FOUND answer fails: a server that refuses the call (permissions) passes.
 * @throws {TemporalConnectionError} `NAMESPACE_NOT_FOUND`.
 */
export async function checkNamespace(
  service: { describeNamespace(request: { namespace: string }): Promise<unknown> },
  address: string,
  namespace: string,
  hints: ConnectionHints,
): Promise<void> {
  try {
    await service.describeNamespace({ namespace });
  } catch (error) {
    if ((error as { code?: unknown }).code === 5 || isNamespaceNotFound(error)) {
      throw namespaceNotFound(address, namespace, hints, error);
    }
  }
}

/**
 * Open a client connection to `address` and check that `namespace` exists there.
 *
 * A TCP probe of the address comes first (one round trip, at most 2 s): when it is refused
 * or the host does not resolve, the error comes at once instead of after the gRPC connect
 * deadline (unless a gRPC proxy is configured, which the probe would bypass); otherwise
 * it explains a connect that failed.
 *
 * @param options.connectTimeoutMs the gRPC connect deadline, ms. @default Temporal's (10 s)
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` or `NAMESPACE_NOT_FOUND`.
 */
/**
 * A plain TCP connect to `address` first (one round trip): a malformed address, a refused
 * port or an unknown host is known at once, where gRPC's connect, which cannot be called
 * off, would wait out its deadline.
 * @returns what the probe found, when it settled nothing.
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` when it settled that nothing
 *   usable answers there (skipped when a proxy is configured: the probe cannot see it).
 */
export async function probeReachable(
  address: string,
  namespace: string,
  hints: ConnectionHints,
): Promise<ProbeResult> {
  const probe = await probeAddress(address);
  if (probe.decisive && !proxyConfigured()) {
    throw temporalUnreachable(address, namespace, probe.reason, hints, probe.error);
  }
  return probe;
}

export async function connectTemporalClient(
  address: string,
  namespace: string,
  options: { connectTimeoutMs?: number; hints?: ConnectionHints } = {},
): Promise<Connection> {
  const hints = options.hints ?? AGENT_CONNECTION_HINTS;
  const probe = await probeReachable(address, namespace, hints);
  const connection = Connection.lazy({
    address,
    ...(options.connectTimeoutMs !== undefined ? { connectTimeout: options.connectTimeoutMs } : {}),
  });
  try {
    await connection.ensureConnected();
  } catch (error) {
    await connection.close().catch(() => undefined);
    const reason = probe.connected
      ? 'a TCP connection opens, but no Temporal frontend answers gRPC there (another ' +
        'service on that port? the SDK connects without TLS)'
      : probe.reason;
    throw temporalUnreachable(address, namespace, reason, hints, error);
  }
  try {
    await checkNamespace(connection.workflowService, address, namespace, hints);
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  return connection;
}

/** What a plain TCP connect to the address found. */
interface ProbeResult {
  /** The connection opened. */
  connected: boolean;
  /** The connect failed in a way waiting does not fix (refused, unknown host). */
  decisive: boolean;
  /** In a few words. */
  reason: string;
  /** The socket's error, when the connect failed. */
  error?: Error;
}

/** Try a TCP connection to `address` (`host:port`, `[v6]:port`, or `host`). */
export function probeAddress(address: string): Promise<ProbeResult> {
  const target = splitAddress(address);
  if (!target) {
    const bare = address.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '');
    const scheme = bare !== address && splitAddress(bare) ? ` (drop the scheme: '${bare}')` : '';
    // Waiting does not fix a malformed address: say so at once.
    return Promise.resolve({
      connected: false,
      decisive: true,
      reason: `'${address}' is not host:port${scheme}`,
    });
  }
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: target.host, port: target.port });
    const done = (result: ProbeResult) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () =>
      done({
        connected: false,
        decisive: false,
        reason: `no answer within ${PROBE_TIMEOUT_MS / 1000} s (a firewall, or a wrong host)`,
      }),
    );
    socket.once('connect', () => done({ connected: true, decisive: false, reason: 'connected' }));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const failed = (decisive: boolean, reason: string) =>
        done({ connected: false, decisive, reason, error });
      switch (error.code) {
        case 'ECONNREFUSED':
          return failed(true, REFUSED);
        case 'ENOTFOUND':
          return failed(true, `unknown host '${target.host}' (the name does not resolve)`);
        case 'EHOSTUNREACH':
        case 'ENETUNREACH':
          return failed(true, 'host unreachable (no route to it)');
        default:
          return failed(false, `${error.code ?? 'error'}: ${clip(error.message)}`);
      }
    });
  });
}

/** `host:port` as its parts; the port defaults to 7233. */
function splitAddress(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]/]+))(?::(\d{1,5}))?$/.exec(address.trim());
  if (!match) return undefined;
  const port = match[3] === undefined ? DEFAULT_PORT : Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (match[1] ?? match[2])!, port };
}

/** Whether gRPC would go through a proxy, which a direct TCP probe does not see. */
function proxyConfigured(): boolean {
  const env = process.env;
  return Boolean(env.grpc_proxy || env.https_proxy || env.http_proxy || env.HTTPS_PROXY);
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${cutPrefix(line, 300)}…` : line;
}
