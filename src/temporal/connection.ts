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
import { connect as tcpConnect, isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Connection, type ConnectionPlugin } from '@temporalio/client';
import type { ResolvedTls } from './connection-config.js';
import { TemporalConnectionError, messageOf } from '../common/errors.js';
import { cutPrefix } from '../common/text.js';

/** Where a user sets the address and the namespace, as the messages should name it. */
export interface ConnectionHints {
  /** e.g. `advanced.temporal.address or TEMPORAL_ADDRESS`. */
  address: string;
  /** e.g. `advanced.temporal.namespace or TEMPORAL_NAMESPACE`. */
  namespace: string;
  /** Say that leaving the address unset starts an embedded dev server (createAgent). */
  embedded?: boolean;
  /** Where TLS is set, e.g. `advanced.temporal.tls (or TEMPORAL_TLS, TEMPORAL_TLS_*)`. */
  tls?: string;
  /** Where the server CA is set. */
  serverCaCert?: string;
  /** Where the server name is set. */
  serverName?: string;
  /** Where the client certificate and key are set. */
  clientCert?: string;
  /** Where the API key is set. */
  apiKey?: string;
}

/** How a connection is secured (resolved by `resolveTemporalConnection`). */
export interface ConnectionSecurity {
  /** `false`: plain. */
  tls: ResolvedTls | false;
  apiKey?: string | undefined;
  metadata?: Record<string, string>;
}

/** The hints of `createAgent`, `createAgentWorker` and `createAgentClient`. */
export const AGENT_CONNECTION_HINTS: ConnectionHints = {
  address: 'advanced.temporal.address or TEMPORAL_ADDRESS',
  namespace: 'advanced.temporal.namespace or TEMPORAL_NAMESPACE',
  embedded: true,
  tls: 'advanced.temporal.tls (or TEMPORAL_TLS=true)',
  serverCaCert: 'advanced.temporal.tls.serverCaCertPath (or TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
  serverName: 'advanced.temporal.tls.serverName (or TEMPORAL_TLS_SERVER_NAME)',
  clientCert:
    'advanced.temporal.tls.clientCertPath and clientKeyPath (or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
  apiKey: 'advanced.temporal.apiKey (or TEMPORAL_API_KEY)',
};

/**
 * A `TEMPORAL_UNREACHABLE` error whose cause is the connection's security: TLS against a
 * plain server, a plain connection to a TLS server, an untrusted or misnamed server
 * certificate, a refused or missing client certificate, refused credentials. `reason`
 * says what to check.
 */
export function temporalTlsFailed(
  address: string,
  namespace: string,
  reason: string,
  cause?: unknown,
): TemporalConnectionError {
  return new TemporalConnectionError(
    'TEMPORAL_UNREACHABLE',
    `Cannot connect to Temporal at ${address} (namespace '${namespace}'): ${reason}.`,
    { address, namespace, reason, cause },
  );
}

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
    return "the port answers, but not with Temporal's gRPC (another service on that port? a TLS port, with a plain connection?)";
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
    if ((error as { code?: unknown }).code === 16) {
      const text = clip(messageOf(error));
      throw temporalTlsFailed(
        address,
        namespace,
        `the server refused the credentials (UNAUTHENTICATED: ${text}); check ` +
          `${hints.apiKey ?? 'the API key'} or ${hints.clientCert ?? 'the client certificate'}`,
        error,
      );
    }
  }
}

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

/**
 * Open a client connection to `address` and check that `namespace` exists there.
 *
 * A TCP probe of the address comes first (one round trip, at most 2 s): when it is refused
 * or the host does not resolve, the error comes at once instead of after the gRPC connect
 * deadline (unless a gRPC proxy is configured, which the probe would bypass); otherwise
 * it explains a connect that failed. A connect still pending after 1 s gets a TLS handshake
 * of ours beside it, so a TLS failure (a missing or refused client certificate, TLS on one
 * side only) is reported with its reason in about a second, not after the deadline.
 *
 * @param options.connectTimeoutMs the gRPC connect deadline, ms. @default Temporal's (10 s)
 * @throws {TemporalConnectionError} `TEMPORAL_UNREACHABLE` or `NAMESPACE_NOT_FOUND`.
 */
export async function connectTemporalClient(
  address: string,
  namespace: string,
  options: {
    connectTimeoutMs?: number;
    hints?: ConnectionHints;
    /** TLS, API key, metadata. @default plain, none */
    security?: ConnectionSecurity;
    /** Connection plugins (given to the Client made on it too). */
    plugins?: ConnectionPlugin[];
  } = {},
): Promise<Connection> {
  const hints = options.hints ?? AGENT_CONNECTION_HINTS;
  const security = options.security ?? { tls: false };
  const probe = await probeReachable(address, namespace, hints);
  const connection = Connection.lazy({
    address,
    ...(options.connectTimeoutMs !== undefined ? { connectTimeout: options.connectTimeoutMs } : {}),
    ...grpcSecurity(security),
    ...(options.plugins && options.plugins.length > 0 ? { plugins: options.plugins } : {}),
  });
  try {
    const tlsReason = await connectedOrTlsFailure(connection, address, security.tls, hints, probe);
    if (tlsReason) {
      await connection.close().catch(() => undefined);
      throw temporalTlsFailed(address, namespace, tlsReason);
    }
  } catch (error) {
    if (error instanceof TemporalConnectionError) throw error;
    await connection.close().catch(() => undefined);
    if (probe.connected) {
      const tlsReason = await diagnoseTls(address, security.tls, hints);
      if (tlsReason) throw temporalTlsFailed(address, namespace, tlsReason, error);
    }
    const reason = probe.connected
      ? 'a TCP connection opens, but no Temporal frontend answers gRPC there (another ' +
        `service on that port?${security.tls ? '' : ' the connection does not use TLS'})`
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

/** How long a client connect may take before {@link diagnoseTls} looks for the cause, ms. */
const DIAGNOSE_AFTER_MS = 1_000;

/**
 * Wait until `connection` is connected. A connect still pending after
 * {@link DIAGNOSE_AFTER_MS} gets a TLS handshake of our own beside it: a server that refuses
 * the connection's TLS (a missing or refused client certificate, an untrusted server
 * certificate, TLS on one side only) is then known in about a second, where
 * `Connection.ensureConnected` would wait out its whole connect deadline (10 s by default)
 * and say only "Failed to connect before the deadline". A healthy connect within the first
 * second opens no second connection.
 * @returns what is wrong with the TLS, when that was found first; undefined once connected.
 * @throws the connect's own error, when it failed first.
 */
async function connectedOrTlsFailure(
  connection: Connection,
  address: string,
  tls: ResolvedTls | false,
  hints: ConnectionHints,
  probe: ProbeResult,
): Promise<string | undefined> {
  const connecting = connection.ensureConnected();
  // Observed by the race below; abandoned (and closed by the caller) on a TLS reason.
  const settled = connecting.then(
    () => undefined,
    () => undefined,
  );
  if (!probe.connected) {
    await connecting;
    return undefined;
  }
  const tlsFailure = new Promise<string>((resolve) => {
    const timer = setTimeout(() => {
      void diagnoseTls(address, tls, hints).then((reason) => {
        if (reason) resolve(reason);
      });
    }, DIAGNOSE_AFTER_MS);
    void settled.then(() => clearTimeout(timer));
  });
  return Promise.race([connecting.then(() => undefined), tlsFailure]);
}

/** The `tls`, `apiKey` and `metadata` options of Temporal's connections. */
export function grpcSecurity(security: ConnectionSecurity): {
  tls?: ResolvedTls;
  apiKey?: string;
  metadata?: Record<string, string>;
} {
  return {
    ...(security.tls ? { tls: security.tls } : {}),
    ...(security.apiKey !== undefined ? { apiKey: security.apiKey } : {}),
    ...(security.metadata && Object.keys(security.metadata).length > 0
      ? { metadata: { ...security.metadata } }
      : {}),
  };
}

/** How long {@link diagnoseTls} waits for the server's alert after a handshake, ms. */
const ALERT_WAIT_MS = 1_000;

/** The HTTP/2 client preface: makes a server that refuses the client's certificate say so. */
const H2_PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

/**
 * After a failed connect to an address that accepts TCP: whether the connection's TLS is
 * the cause, found with one TLS handshake of our own (node:tls, the same CA, name and
 * client certificate). Bounded by 2 s plus 1 s waiting for the server's alert.
 * @returns what is wrong and what to set, or undefined when TLS is not the cause.
 */
export function diagnoseTls(
  address: string,
  tls: ResolvedTls | false,
  hints: ConnectionHints,
): Promise<string | undefined> {
  const target = splitAddress(address);
  if (!target) return Promise.resolve(undefined);
  const setTls = hints.tls ?? 'TLS';
  return new Promise((resolve) => {
    let settled = false;
    let handshaken = false;
    const servername = tls ? (tls.serverNameOverride ?? target.host) : target.host;
    const socket = tlsConnect({
      host: target.host,
      port: target.port,
      ALPNProtocols: ['h2'],
      ...(isIP(servername) ? {} : { servername }),
      ...(tls
        ? {
            ...(tls.serverRootCACertificate ? { ca: tls.serverRootCACertificate } : {}),
            ...(tls.clientCertPair
              ? { cert: tls.clientCertPair.crt, key: tls.clientCertPair.key }
              : {}),
          }
        : { rejectUnauthorized: false }),
    });
    const done = (reason: string | undefined) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(undefined));
    socket.once('secureConnect', () => {
      handshaken = true;
      if (!tls) {
        done(
          `the server speaks TLS, and the connection does not use it: set ${setTls}` +
            (hints.serverCaCert ? ` (with ${hints.serverCaCert} when its CA is private)` : ''),
        );
        return;
      }
      socket.write(H2_PREFACE);
      setTimeout(() => done(undefined), ALERT_WAIT_MS).unref();
    });
    // The server answered the HTTP/2 preface: it accepted the handshake, TLS is not the cause.
    socket.once('data', () => done(undefined));
    // Closed after the handshake without a word: a server that refused the client's
    // certificate (or its absence) without an alert.
    socket.once('close', () => {
      if (!handshaken || !tls) return done(undefined);
      done(
        tls.clientCertPair
          ? `the server closed the connection right after the TLS handshake: it refused the client certificate? Check that ${hints.clientCert ?? 'the client certificate'} names a certificate signed by a CA the server trusts`
          : `the server closed the connection right after the TLS handshake: it requires a client certificate (mTLS)? Set ${hints.clientCert ?? 'a client certificate and key'}`,
      );
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (!tls) return done(undefined);
      done(tlsFailureReason(error, handshaken, servername, hints));
    });
  });
}

/** What a failed TLS handshake (or the alert after it) says to check. */
function tlsFailureReason(
  error: NodeJS.ErrnoException,
  handshaken: boolean,
  servername: string,
  hints: ConnectionHints,
): string | undefined {
  const code = error.code ?? '';
  const text = `${code} ${error.message}`;
  if (/CERTIFICATE_REQUIRED|alert certificate required/i.test(text)) {
    return `the server requires a client certificate (mTLS) and the connection has none: set ${hints.clientCert ?? 'a client certificate and key'}`;
  }
  if (
    /ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_CERTIFICATE_UNKNOWN|ALERT_ACCESS_DENIED|ALERT_HANDSHAKE_FAILURE/i.test(
      text,
    ) &&
    handshaken
  ) {
    return `the server refused the client certificate (${code}): check that ${hints.clientCert ?? 'the client certificate'} names a certificate signed by a CA the server trusts`;
  }
  if (
    /SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_SIGNATURE_FAILURE|CERT_UNTRUSTED/i.test(
      text,
    )
  ) {
    return `the server's certificate is not signed by a CA the connection trusts (${code}): set ${hints.serverCaCert ?? 'the server CA'} to the CA certificate that signed it`;
  }
  if (/ALTNAME|Hostname\/IP does not match|NotValidForName/i.test(text)) {
    return `the server's certificate is not for '${servername}' (${clip(error.message)}): set ${hints.serverName ?? 'the server name'} to a name it carries`;
  }
  if (/CERT_HAS_EXPIRED|CERT_NOT_YET_VALID/i.test(text)) {
    return `the server's certificate is not valid now (${code})`;
  }
  if (
    !handshaken &&
    /WRONG_VERSION_NUMBER|wrong version number|packet length too long|ECONNRESET|socket disconnected before secure TLS|unexpected eof|EPROTO/i.test(
      text,
    )
  ) {
    return `the server does not speak TLS (a plain server?), and the connection uses TLS: unset ${hints.tls ?? 'TLS'} (and TEMPORAL_TLS*), or point the address at the server's TLS port`;
  }
  return undefined;
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
