/**
 * Opening the CLI's Temporal client: connect within the command's deadline (and check the
 * namespace), with the CLI's data converter and identity; connection failures as one line
 * that says what to pass.
 *
 * @module
 */
import { hostname, userInfo } from 'node:os';
import { Client, type Connection } from '@temporalio/client';
import { TemporalConnectionError } from '../common/errors.js';
import { connectTemporalClient, type ConnectionHints } from '../temporal/connection.js';
import { CliError, oneLine } from './cli-error.js';
import type { CommandArgs } from './command-args.js';
import { deadlineOf, remainingMs } from './deadline.js';
import { payloadDataConverter } from './history-codecs.js';
import { formatDuration } from './workers.js';

/** How the CLI's messages say where the address and namespace come from. */
const CLI_CONNECTION_HINTS: ConnectionHints = {
  address: '--address HOST:PORT (or TEMPORAL_ADDRESS)',
  namespace: '--namespace NAME (or TEMPORAL_NAMESPACE)',
  tls: '--tls (or TEMPORAL_TLS=true)',
  serverCaCert: '--tls-ca-path (or TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
  serverName: '--tls-server-name (or TEMPORAL_TLS_SERVER_NAME)',
  clientCert:
    '--tls-cert-path and --tls-key-path (or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
  apiKey: '--api-key (or TEMPORAL_API_KEY)',
};

/** The CLI's default identity: the user and the machine (`alice@build-7`). */
function cliIdentity(): string {
  let user = process.env.USER ?? process.env.USERNAME;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the environment's, else none.
  }
  return `${user ?? 'unknown'}@${hostname()}`;
}

/**
 * Connect with a short timeout (and check the namespace), run `body` with every server call
 * bounded by the command's deadline, close the connection.
 */
export async function withClient<T>(
  args: CommandArgs,
  body: (client: Client) => Promise<T>,
): Promise<T> {
  const { client, connection } = await openClient(args);
  try {
    return await connection.withDeadline(deadlineOf(args), () => body(client));
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * Connect with a short timeout (and check the namespace): a client of the CLI's data
 * converter and identity on a connection the caller closes.
 */
export async function openClient(
  args: CommandArgs,
): Promise<{ client: Client; connection: Connection }> {
  // The command's whole --timeout, not a shorter cap of its own: on a loaded machine a
  // frontend that accepts TCP can take seconds to answer gRPC (a 3 s cap failed a CLI test at
  // load 25 against a running server). A refused port or an unknown host still fails at once.
  const connectTimeout = Math.max(1, remainingMs(args));
  let connection: Connection;
  try {
    connection = await connectTemporalClient(args.address, args.namespace, {
      connectTimeoutMs: connectTimeout,
      hints: CLI_CONNECTION_HINTS,
      security: args.connection,
    });
  } catch (error) {
    if (error instanceof TemporalConnectionError && error.code === 'NAMESPACE_NOT_FOUND') {
      throw new CliError(
        `namespace '${args.namespace}' not found at ${args.address}: pass ` +
          `${CLI_CONNECTION_HINTS.namespace}, or create it with \`temporal operator namespace ` +
          `create --namespace ${args.namespace} --address ${args.address}\``,
        { cause: error },
      );
    }
    const reason = error instanceof TemporalConnectionError ? error.reason : oneLine(error);
    if (error instanceof TemporalConnectionError && isSecurityFailure(error)) {
      throw new CliError(`cannot connect to Temporal at ${args.address}: ${reason}`, {
        cause: error,
      });
    }
    const hint = `check that a server runs there and pass ${CLI_CONNECTION_HINTS.address}, or a longer --timeout`;
    throw new CliError(
      `cannot reach Temporal at ${args.address} within ${formatDuration(connectTimeout)} ` +
        `(${reason}); ${hint}`,
      { cause: error },
    );
  }
  try {
    const dataConverter = await payloadDataConverter(args);
    const client = new Client({
      connection,
      namespace: args.namespace,
      dataConverter,
      // Recorded with every Update (an approval, a denial): who answered, as inspect shows.
      identity: args.identity ?? cliIdentity(),
    });
    return { client, connection };
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}

/** Whether the connection's TLS or credentials failed (see `temporalTlsFailed`). */
function isSecurityFailure(error: TemporalConnectionError): boolean {
  return error.message.startsWith('Cannot connect to Temporal at');
}
