/**
 * Where Temporal is and how to reach it securely: the address, namespace, TLS (server CA,
 * server name), mTLS (client certificate and key), API key and gRPC metadata, resolved
 * from options, else from the environment variables and profile file the `temporal` CLI
 * reads (through Temporal's `@temporalio/envconfig`), else the defaults.
 *
 * Precedence, field by field: an explicit option, then a `TEMPORAL_*` variable, then the
 * profile of the config file, then the default. The worker's `NativeConnection`, the
 * client's `Connection` and `durable-agent` use the same resolution.
 *
 * Variables (Temporal's names): `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS` (`true`/`1` or `false`), `TEMPORAL_TLS_CLIENT_CERT_PATH`
 * / `_DATA`, `TEMPORAL_TLS_CLIENT_KEY_PATH` / `_DATA`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH` /
 * `_DATA`, `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_GRPC_META_<NAME>` (one header each),
 * `TEMPORAL_PROFILE` (the profile's name, default `default`) and `TEMPORAL_CONFIG_FILE`
 * (default `$XDG_CONFIG_HOME/temporalio/temporal.toml`, else
 * `~/.config/temporalio/temporal.toml`; `~/Library/Application Support/...` on macOS).
 *
 * The profile file is TOML, one table per profile:
 * ```toml
 * [profile.default]
 * address = "my-ns.a1b2c.tmprl.cloud:7233"
 * namespace = "my-ns.a1b2c"
 * api_key = "..."            # or mTLS:
 * [profile.default.tls]
 * client_cert_path = "/etc/temporal/client.pem"
 * client_key_path = "/etc/temporal/client.key"
 * server_ca_cert_path = "/etc/temporal/ca.pem"   # *_data = "-----BEGIN ..." for PEM text
 * server_name = "temporal.internal"
 * disabled = false
 * [profile.default.grpc_meta]
 * my-header = "value"
 * ```
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { isAbsolute, join } from 'node:path';
import {
  loadClientConfig,
  loadClientConfigProfile,
  type ClientConfigProfile,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import { ConfigError, messageOf } from '../common/errors.js';
import type { TemporalOptions } from './options.js';

/**
 * TLS settings of the connection to Temporal. Each certificate or key is PEM, given as
 * text (or bytes) or as a file path, not both. Files are read once, at `createAgent` (or
 * `createAgentWorker`, `createAgentClient`, the CLI's start).
 */
export interface TemporalTlsOptions {
  /**
   * The CA certificate(s) that signed the server's certificate, PEM text.
   * @default the system's trusted roots (right for Temporal Cloud)
   */
  serverCaCert?: string | Uint8Array;
  /** A PEM file with the server's CA certificate(s), instead of `serverCaCert`. */
  serverCaCertPath?: string;
  /**
   * The name the server's certificate must carry, when it is not the address's host (an
   * address by IP, a load balancer).
   * @default the host of `address`
   */
  serverName?: string;
  /** The client certificate for mTLS, PEM text; needs `clientKey`/`clientKeyPath`. */
  clientCert?: string | Uint8Array;
  /** A PEM file with the client certificate, instead of `clientCert`. */
  clientCertPath?: string;
  /** The client certificate's private key, PEM text; needs `clientCert`/`clientCertPath`. */
  clientKey?: string | Uint8Array;
  /** A PEM file with the client's private key, instead of `clientKey`. */
  clientKeyPath?: string;
}

/** The connection fields of `advanced.temporal` (documented on {@link TemporalOptions}). */
type TemporalConnectionOptions = Pick<
  TemporalOptions,
  'address' | 'namespace' | 'tls' | 'apiKey' | 'metadata' | 'profile' | 'configFile' | 'envConfig'
>;

/** The TLS of a connection, as Temporal's `tls` option takes it. */
export interface ResolvedTls {
  serverRootCACertificate?: Buffer;
  serverNameOverride?: string;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** A connection's settings after resolution. */
export interface ResolvedTemporalConnection {
  /** `host:port`; undefined: none configured anywhere (createAgent's embedded server). */
  address: string | undefined;
  namespace: string;
  /** `false`: plain; an object: TLS (empty: the system's roots, the address's host name). */
  tls: ResolvedTls | false;
  apiKey: string | undefined;
  /** gRPC metadata (lowercase header names) sent with every call. */
  metadata: Record<string, string>;
  /** Where the TLS choice came from, for error messages (e.g. `advanced.temporal.tls`). */
  tlsFrom: string;
  /** The profile read, when a config file had one. */
  profile?: { name: string; file: string };
}

/** How the messages name the options (`advanced.temporal` or the CLI's flags). */
export interface ConnectionOptionNames {
  /** e.g. `advanced.temporal.tls.clientCertPath`, `--tls-cert-path`. */
  tls: (field: keyof TemporalTlsOptions | 'tls') => string;
  apiKey: string;
  metadata: string;
  profile: string;
  configFile: string;
}

/** The names of `advanced.temporal`'s fields. */
const AGENT_OPTION_NAMES: ConnectionOptionNames = {
  tls: (field) => (field === 'tls' ? 'advanced.temporal.tls' : `advanced.temporal.tls.${field}`),
  apiKey: 'advanced.temporal.apiKey',
  metadata: 'advanced.temporal.metadata',
  profile: 'advanced.temporal.profile',
  configFile: 'advanced.temporal.configFile',
};

const DEFAULT_NAMESPACE = 'default';
const DEFAULT_PROFILE = 'default';
const HEADER_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/** One certificate or key field: its PEM text and path options, and the TOML/env names. */
const PEM_FIELDS = [
  {
    data: 'serverCaCert',
    path: 'serverCaCertPath',
    profile: 'serverCACert',
    toml: 'server_ca_cert',
    env: 'TEMPORAL_TLS_SERVER_CA_CERT',
  },
  {
    data: 'clientCert',
    path: 'clientCertPath',
    profile: 'clientCert',
    toml: 'client_cert',
    env: 'TEMPORAL_TLS_CLIENT_CERT',
  },
  {
    data: 'clientKey',
    path: 'clientKeyPath',
    profile: 'clientKey',
    toml: 'client_key',
    env: 'TEMPORAL_TLS_CLIENT_KEY',
  },
] as const;

/**
 * Resolve the connection: explicit `options` first, then the `TEMPORAL_*` variables of
 * `env`, then the profile file, then the defaults (no address, namespace `default`, no
 * TLS unless an API key is set). TLS is on when `options.tls` is `true` or an object, or
 * the variables or profile set any TLS field without disabling it, or an API key is set
 * (API keys need TLS); `options.tls: false` turns it off whatever else says.
 *
 * Reads the profile file and the certificate files (synchronously).
 *
 * @param names how messages name the options. @default `advanced.temporal.*`
 * @throws {ConfigError} naming the option, variable or profile key and the path, when a
 *   certificate or key file cannot be read or is not PEM, when only one of a client
 *   certificate and its key is given, when both text and a path are given for one of
 *   them, when the profile file cannot be read or parsed, when a profile named by
 *   `options.profile` or `TEMPORAL_PROFILE` is not in it, when a metadata header name is
 *   not a valid gRPC header name, or when `authorization` metadata and an API key are both
 *   set.
 */
export function resolveTemporalConnection(
  options: TemporalConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
  names: ConnectionOptionNames = AGENT_OPTION_NAMES,
): ResolvedTemporalConnection {
  const fromFile = options.envConfig === false ? undefined : loadProfile(options, env, names);
  const sources: ConnectionSources = {
    options,
    env,
    names,
    fromFile,
    profile: fromFile?.profile ?? {},
  };
  const { profile } = sources;
  const address = options.address ?? (profile.address || undefined);
  const namespace = options.namespace ?? (profile.namespace || undefined) ?? DEFAULT_NAMESPACE;
  const apiKey = options.apiKey ?? (profile.apiKey || undefined);
  const metadata = resolveMetadata(sources, apiKey);
  const { enabled, tlsFrom } = tlsChoice(sources, apiKey);
  const tls = enabled ? resolveTls(sources) : false;
  return withProfile({ address, namespace, tls, apiKey, metadata, tlsFrom }, fromFile);
}

/** Where a connection's settings come from: the options, the variables, the profile. */
interface ConnectionSources {
  readonly options: TemporalConnectionOptions;
  readonly env: NodeJS.ProcessEnv;
  readonly names: ConnectionOptionNames;
  /** The profile file's profile; undefined with `envConfig: false`. */
  readonly fromFile: LoadedProfile | undefined;
  /** The profile with the variables applied over it (empty with `envConfig: false`). */
  readonly profile: ClientConfigProfile;
}

/** Variable `name` of the environment, when set, not empty, and `envConfig` allows it. */
function envValue(sources: ConnectionSources, name: string): string | undefined {
  return sources.options.envConfig === false ? undefined : sources.env[name] || undefined;
}

/** How messages name a profile setting: the variable `envName` when set, else the key `field`. */
function where(sources: ConnectionSources, field: string, envName?: string): string {
  const { fromFile } = sources;
  return envName !== undefined && envValue(sources, envName) !== undefined
    ? envName
    : `${field} of profile '${fromFile?.name ?? DEFAULT_PROFILE}' in ${fromFile?.file ?? 'the config file'}`;
}

/**
 * The profile's gRPC metadata with `options.metadata` over it, header names lowercased.
 *
 * @throws {ConfigError} when a header name is not valid, or `authorization` is set beside an
 *   API key.
 */
function resolveMetadata(
  sources: ConnectionSources,
  apiKey: string | undefined,
): Record<string, string> {
  const { names } = sources;
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(sources.profile.grpcMeta ?? {})) metadata[key] = value;
  for (const [key, value] of Object.entries(sources.options.metadata ?? {})) {
    const header = key.toLowerCase();
    if (!HEADER_NAME.test(header)) {
      throw new ConfigError(
        `${names.metadata} has '${key}', which is not a gRPC header name (letters, digits, '-', '_', '.')`,
      );
    }
    metadata[header] = value;
  }
  if (apiKey !== undefined && metadata.authorization !== undefined) {
    throw new ConfigError(
      `Both an API key and 'authorization' metadata are set: the API key is sent as ` +
        `'authorization: Bearer <key>'; drop one (${names.apiKey} / TEMPORAL_API_KEY, or the ` +
        `'authorization' header of ${names.metadata} / TEMPORAL_GRPC_META_AUTHORIZATION)`,
    );
  }
  return metadata;
}

/** Whether TLS is on, and what said so. */
function tlsChoice(
  sources: ConnectionSources,
  apiKey: string | undefined,
): { enabled: boolean; tlsFrom: string } {
  const { options, profile } = sources;
  if (options.tls !== undefined) {
    return { enabled: options.tls !== false, tlsFrom: sources.names.tls('tls') };
  }
  if (profile.tls !== undefined) {
    const tlsFrom =
      envValue(sources, 'TEMPORAL_TLS') !== undefined
        ? 'TEMPORAL_TLS'
        : (tlsEnvName(sources.env, options) ?? where(sources, 'the tls table'));
    return { enabled: profile.tls.disabled !== true, tlsFrom };
  }
  const enabled = apiKey !== undefined;
  return {
    enabled,
    tlsFrom: enabled ? 'the API key (API keys need TLS)' : 'the default (no TLS)',
  };
}

/** A certificate or key read: its bytes, and what gave it (for messages). */
interface PemValue {
  bytes: Buffer;
  from: string;
}

/**
 * The TLS settings of a connection with TLS on: certificates and keys from the options, else
 * the variables or profile; the server name likewise.
 *
 * @throws {ConfigError} when a certificate or key is given twice, cannot be read, is not
 *   PEM, or is half of a client certificate pair.
 */
function resolveTls(sources: ConnectionSources): ResolvedTls {
  const { options, names } = sources;
  const given = typeof options.tls === 'object' ? options.tls : {};
  const tls: ResolvedTls = {};
  const pem: Partial<Record<(typeof PEM_FIELDS)[number]['data'], PemValue>> = {};
  for (const field of PEM_FIELDS) {
    const got = pemOf(sources, given, field);
    if (got === undefined) continue;
    pem[field.data] = got;
    if (!got.bytes.toString('utf8').includes('-----BEGIN ')) {
      throw new ConfigError(`${got.from}: not PEM (no '-----BEGIN ' line)`);
    }
  }
  if (pem.serverCaCert) tls.serverRootCACertificate = pem.serverCaCert.bytes;
  const serverName = given.serverName ?? (sources.profile.tls?.serverName || undefined);
  if (serverName !== undefined) tls.serverNameOverride = serverName;
  if (pem.clientCert && pem.clientKey) {
    tls.clientCertPair = { crt: pem.clientCert.bytes, key: pem.clientKey.bytes };
  } else if (pem.clientCert || pem.clientKey) {
    const has = (pem.clientCert ?? pem.clientKey)!.from;
    const missing = pem.clientCert
      ? `${names.tls('clientKey')} or ${names.tls('clientKeyPath')} (TEMPORAL_TLS_CLIENT_KEY_PATH)`
      : `${names.tls('clientCert')} or ${names.tls('clientCertPath')} (TEMPORAL_TLS_CLIENT_CERT_PATH)`;
    throw new ConfigError(
      `${has} gives half of a client certificate pair: mTLS needs both the certificate and its key; set ${missing}`,
    );
  }
  return tls;
}

/** One certificate or key: from its text or path option, else from the variables or profile. */
function pemOf(
  sources: ConnectionSources,
  given: TemporalTlsOptions,
  field: (typeof PEM_FIELDS)[number],
): PemValue | undefined {
  const { names } = sources;
  const data = given[field.data];
  const path = given[field.path];
  if (data !== undefined && path !== undefined) {
    throw new ConfigError(
      `${names.tls(field.data)} and ${names.tls(field.path)} are both set: give the PEM text or its file, not both`,
    );
  }
  if (data !== undefined) return { bytes: Buffer.from(data), from: names.tls(field.data) };
  if (path !== undefined) {
    return { bytes: readPem(path, names.tls(field.path)), from: names.tls(field.path) };
  }
  const source: ConfigDataSource | undefined = sources.profile.tls?.[field.profile];
  if (source === undefined) return undefined;
  if ('path' in source) {
    const from = where(sources, `tls.${field.toml}_path`, `${field.env}_PATH`);
    return { bytes: readPem(source.path, from), from };
  }
  const from = where(sources, `tls.${field.toml}_data`, `${field.env}_DATA`);
  return { bytes: Buffer.from(source.data), from };
}

function withProfile(
  resolved: ResolvedTemporalConnection,
  fromFile: LoadedProfile | undefined,
): ResolvedTemporalConnection {
  if (fromFile?.found) resolved.profile = { name: fromFile.name, file: fromFile.file };
  return resolved;
}

/** The TLS variable that set TLS, if any did. */
function tlsEnvName(
  env: NodeJS.ProcessEnv,
  options: TemporalConnectionOptions,
): string | undefined {
  if (options.envConfig === false) return undefined;
  return Object.keys(env).find((k) => k.startsWith('TEMPORAL_TLS_') && env[k]);
}

interface LoadedProfile {
  profile: ClientConfigProfile;
  name: string;
  /** The file read, or the one that would have been. */
  file: string;
  /** Whether the file had the profile. */
  found: boolean;
}

/** The profile (with the variables applied over it), through `@temporalio/envconfig`. */
function loadProfile(
  options: TemporalConnectionOptions,
  env: NodeJS.ProcessEnv,
  names: ConnectionOptionNames,
): LoadedProfile {
  // Empty variables count as unset, as TEMPORAL_ADDRESS always did here; an empty
  // TEMPORAL_GRPC_META_<NAME> keeps its meaning (remove that header).
  const vars: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (value === '' && !key.startsWith('TEMPORAL_GRPC_META_')) continue;
    vars[key] = value;
  }
  const file = options.configFile ?? vars.TEMPORAL_CONFIG_FILE ?? defaultConfigFile(vars);
  const name = options.profile ?? vars.TEMPORAL_PROFILE ?? DEFAULT_PROFILE;
  const fileWhat =
    options.configFile !== undefined
      ? `${names.configFile} '${options.configFile}'`
      : vars.TEMPORAL_CONFIG_FILE !== undefined
        ? `TEMPORAL_CONFIG_FILE '${vars.TEMPORAL_CONFIG_FILE}'`
        : `Temporal's config file ${file ?? '(none: no HOME)'}`;
  let text: string | undefined;
  if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The default file is optional; one named by the option or the variable must exist.
      const named = options.configFile !== undefined || vars.TEMPORAL_CONFIG_FILE !== undefined;
      if (named || code !== 'ENOENT') {
        throw new ConfigError(`Cannot read ${fileWhat}: ${code ?? String(error)}`, {
          cause: error,
        });
      }
    }
  }
  const profileNamed = options.profile !== undefined || vars.TEMPORAL_PROFILE !== undefined;
  let found = false;
  let profile: ClientConfigProfile;
  try {
    if (text !== undefined) {
      found = loadClientConfig({ configSource: { data: text } }).profiles[name] !== undefined;
    }
    if (!found && profileNamed) {
      const by = options.profile !== undefined ? names.profile : 'TEMPORAL_PROFILE';
      throw new ConfigError(
        `${by} names profile '${name}', which ${fileWhat} does not have` +
          (text === undefined ? ' (there is no such file)' : ''),
      );
    }
    // The file was read above: envconfig would ignore a missing file that a name points to.
    profile = loadClientConfigProfile(
      found
        ? { profile: name, configSource: { data: text! }, overrideEnvVars: vars }
        : { disableFile: true, overrideEnvVars: vars },
    );
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const message = messageOf(error);
    throw new ConfigError(`Cannot load profile '${name}' from ${fileWhat}: ${message}`, {
      cause: error,
    });
  }
  return { profile, name, file: file ?? '(no config file)', found };
}

/** `temporal`'s default config file: `<config dir>/temporalio/temporal.toml`. */
function defaultConfigFile(env: Record<string, string>): string | undefined {
  if (platform() === 'win32')
    return env.APPDATA ? join(env.APPDATA, 'temporalio', 'temporal.toml') : undefined;
  if (platform() === 'darwin') {
    const home = env.HOME;
    return home
      ? join(home, 'Library', 'Application Support', 'temporalio', 'temporal.toml')
      : undefined;
  }
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg) return isAbsolute(xdg) ? join(xdg, 'temporalio', 'temporal.toml') : undefined;
  const home = env.HOME;
  return home ? join(home, '.config', 'temporalio', 'temporal.toml') : undefined;
}

/** A PEM file's bytes. @throws {ConfigError} naming `what` and the path. */
function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a folder'
            : (code ?? String(error));
    throw new ConfigError(`${what}: cannot read '${path}' (${why})`, { cause: error });
  }
}
