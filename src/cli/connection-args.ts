/**
 * The connection a command line names: the temporal CLI's flags (`--tls`, `--api-key`,
 * `--profile`, ...), over the `TEMPORAL_*` variables, over the profile of Temporal's config
 * file, resolved by `src/temporal/`; its errors name the CLI's flags.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import {
  resolveTemporalConnection,
  type ConnectionOptionNames,
  type ResolvedTemporalConnection,
  type TemporalTlsOptions,
} from '../temporal/connection-config.js';
import { CliError } from './cli-error.js';

/** The connection flags, global options of every command. */
export const CONNECTION_OPTIONS = [
  'tls',
  'tls-ca-path',
  'tls-cert-path',
  'tls-key-path',
  'tls-server-name',
  'api-key',
  'grpc-meta',
  'profile',
  'config-file',
];

/** How resolution errors name the CLI's flags. */
const CLI_OPTION_NAMES: ConnectionOptionNames = {
  tls: (field) =>
    ({
      tls: '--tls',
      serverCaCert: '--tls-ca-path',
      serverCaCertPath: '--tls-ca-path',
      serverName: '--tls-server-name',
      clientCert: '--tls-cert-path',
      clientCertPath: '--tls-cert-path',
      clientKey: '--tls-key-path',
      clientKeyPath: '--tls-key-path',
    })[field],
  apiKey: '--api-key',
  metadata: '--grpc-meta',
  profile: '--profile',
  configFile: '--config-file',
};

/**
 * The connection of the flags, the variables and the profile.
 * @throws {CliError} a usage error naming the flag, variable or profile key at fault.
 */
export function connectionOf(
  values: {
    address?: string | undefined;
    namespace?: string | undefined;
    tls?: boolean | undefined;
    'tls-ca-path'?: string | undefined;
    'tls-cert-path'?: string | undefined;
    'tls-key-path'?: string | undefined;
    'tls-server-name'?: string | undefined;
    'api-key'?: string | undefined;
    'grpc-meta'?: string[] | undefined;
    profile?: string | undefined;
    'config-file'?: string | undefined;
  },
  env: NodeJS.ProcessEnv,
): ResolvedTemporalConnection {
  const tls: TemporalTlsOptions = {
    ...(values['tls-ca-path'] ? { serverCaCertPath: values['tls-ca-path'] } : {}),
    ...(values['tls-cert-path'] ? { clientCertPath: values['tls-cert-path'] } : {}),
    ...(values['tls-key-path'] ? { clientKeyPath: values['tls-key-path'] } : {}),
    ...(values['tls-server-name'] ? { serverName: values['tls-server-name'] } : {}),
  };
  const metadata: Record<string, string> = {};
  for (const entry of values['grpc-meta'] ?? []) {
    const at = entry.indexOf('=');
    if (at <= 0) {
      throw new CliError(`--grpc-meta must be NAME=VALUE, got '${entry}'`, { usage: true });
    }
    metadata[entry.slice(0, at)] = entry.slice(at + 1);
  }
  try {
    return resolveTemporalConnection(
      {
        ...(values.address ? { address: values.address } : {}),
        ...(values.namespace ? { namespace: values.namespace } : {}),
        ...(Object.keys(tls).length > 0 ? { tls } : values.tls ? { tls: true } : {}),
        ...(values['api-key'] ? { apiKey: values['api-key'] } : {}),
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
        ...(values.profile ? { profile: values.profile } : {}),
        ...(values['config-file'] ? { configFile: values['config-file'] } : {}),
      },
      env,
      CLI_OPTION_NAMES,
    );
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new CliError(error.message, { usage: true, cause: error });
    }
    throw error;
  }
}
