/**
 * Command-line parsing of `durable-agent` with `node:util` `parseArgs`: one command, its
 * positionals, its own options and the global ones. Pure apart from reading the
 * environment's defaults.
 *
 * @module
 */
import { DEFAULTS } from '../common/defaults.js';
import { messageOf } from '../common/errors.js';
import { parseArgs } from 'node:util';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { ConfigError } from '../common/errors.js';
import { SESSION_LIST_STATUSES, type SessionListStatus } from '../client/session-status.js';
import {
  resolveTemporalConnection,
  type ConnectionOptionNames,
  type ResolvedTemporalConnection,
  type TemporalTlsOptions,
} from '../temporal/connection-config.js';

/**
 * An error the CLI reports as one line: a usage error exits 2, anything else 1, unless
 * `exitCode` says otherwise (`golden` exits 2 for bad input: 1 means decisions changed).
 */
export class CliError extends Error {
  /** The process exit code. */
  readonly exitCode: number;
  constructor(
    message: string,
    options: { usage?: boolean; exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? (options.usage ? 2 : 1);
  }
}

/** The commands, with their positionals and the options each takes. */
const COMMANDS = {
  sessions: { positionals: [], options: ['limit', 'json', 'timeout', 'status', 'agent'] },
  inspect: { positionals: ['sessionId | history.json'], options: ['json', 'timeout'] },
  replay: { positionals: ['sessionId | history.json'], options: ['timeout'] },
  pending: { positionals: ['sessionId'], options: ['json', 'timeout'] },
  approve: {
    positionals: ['sessionId', 'requestId'],
    options: ['input', 'wait', 'timeout', 'identity'],
  },
  deny: {
    positionals: ['sessionId', 'requestId'],
    options: ['message', 'interrupt', 'wait', 'timeout', 'identity'],
  },
  dev: { positionals: ['module.ts|js'], options: ['ui', 'db', 'versioning'] },
  golden: { positionals: ['module.ts|js', 'recordings'], options: ['json'] },
  gate: {
    positionals: ['module.ts|js'],
    options: ['version', 'since', 'limit', 'event', 'json', 'timeout'],
  },
  'codec-server': { positionals: [], options: ['port', 'host', 'cors-origin'] },
  ui: {
    positionals: [],
    options: ['port', 'host', 'identity', 'limit', 'timeout', 'task-queue'],
  },
} as const satisfies Record<string, { positionals: readonly string[]; options: readonly string[] }>;

/** Default of `--timeout`: how long a command waits on the server and on a worker, ms. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** Default of `--timeout` for `gate`, which reads many histories and runs callbacks, ms. */
const GATE_TIMEOUT_MS = 120_000;

/** Environment variable holding the bearer token of `codec-server`. */
export const CODEC_TOKEN_VARIABLE = 'DURABLE_AGENT_CODEC_TOKEN';

/** Environment variable holding the token of `ui` (a random one when unset). */
export const UI_TOKEN_VARIABLE = 'DURABLE_AGENT_UI_TOKEN';

/** Default `--port` of `ui` (next to the Temporal Web UI's 8233). */
export const DEFAULT_UI_PORT = 8234;

/** Default `--port` of `codec-server` (Temporal's samples' port). */
export const DEFAULT_CODEC_PORT = 8888;

/** Default `--cors-origin`s of `codec-server`: the dev server's UI, and Temporal Cloud's. */
export const DEFAULT_CORS_ORIGINS = [
  'http://localhost:8233',
  'http://127.0.0.1:8233',
  'https://cloud.temporal.io',
];

/**
 * The key ring's variable (`ENCRYPTION_KEYS_VARIABLE` of src/payloads/encryption.ts, not
 * imported: help and usage errors answer without loading Temporal's protobufs).
 */
const KEYS_VARIABLE = 'DURABLE_AGENT_ENCRYPTION_KEYS';

/** A command's name. */
type CommandName = keyof typeof COMMANDS;

const OPTIONS = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  tls: { type: 'boolean' },
  'tls-ca-path': { type: 'string' },
  'tls-cert-path': { type: 'string' },
  'tls-key-path': { type: 'string' },
  'tls-server-name': { type: 'string' },
  'api-key': { type: 'string' },
  'grpc-meta': { type: 'string', multiple: true },
  profile: { type: 'string' },
  'config-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  limit: { type: 'string' },
  status: { type: 'string' },
  agent: { type: 'string' },
  json: { type: 'boolean' },
  input: { type: 'string' },
  message: { type: 'string' },
  interrupt: { type: 'boolean' },
  ui: { type: 'boolean' },
  db: { type: 'string' },
  payloads: { type: 'string' },
  timeout: { type: 'string' },
  wait: { type: 'boolean' },
  identity: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'cors-origin': { type: 'string', multiple: true },
  'task-queue': { type: 'string' },
  version: { type: 'string' },
  since: { type: 'string' },
  event: { type: 'string', multiple: true },
  versioning: { type: 'string' },
} as const;

const CONNECTION_OPTIONS = [
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

const GLOBAL_OPTIONS = ['address', 'namespace', 'payloads', 'help', ...CONNECTION_OPTIONS];

/** Commands that reach no Temporal server of the user's (no connection settings apply). */
const SERVERLESS_COMMANDS: readonly string[] = ['dev', 'golden'];

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

/** A parsed command line. */
export type ParsedArgs =
  | { kind: 'help'; command?: CommandName }
  /** `--version` or `-v` with no command: print the package's version. */
  | { kind: 'version' }
  | {
      kind: 'command';
      command: CommandName;
      /** The command's positionals, in order (all present). */
      args: string[];
      /** `--address`, else `TEMPORAL_ADDRESS`, else `127.0.0.1:7233`. */
      address: string;
      /** Whether the address came from `--address` (not the environment or the default). */
      addressGiven: boolean;
      /** `--namespace`, else `TEMPORAL_NAMESPACE`, else the profile's, else `default`. */
      namespace: string;
      /**
       * The connection: the flags, else the `TEMPORAL_*` variables, else the profile of
       * Temporal's config file (as the `temporal` CLI); plain for `dev` and `golden`.
       */
      connection: ResolvedTemporalConnection;
      /** `--payloads`: folder of the agent's payload store. @default `.durable-agent/payloads` */
      payloads: string;
      /**
       * `--timeout`: how long the command waits on the server and on a worker, in all, ms.
       * @default {@link DEFAULT_TIMEOUT_MS}
       */
      timeoutMs: number;
      /** `--wait` (approve, deny): send even when no worker answers, and wait for one. */
      wait: boolean;
      /**
       * `--identity` (approve, deny): who answers, recorded with the answer in the session's
       * history (what `inspect` shows as who approved or denied). @default `<user>@<host>`
       */
      identity?: string;
      limit?: number;
      /**
       * `--status` (sessions): only sessions in this status (`DurableAgentStatus` of running
       * executions; Temporal's `ExecutionStatus` of the others).
       */
      status?: SessionListStatus;
      /** `--agent` (sessions): only sessions of the agent of this name (`DurableAgentName`). */
      agent?: string;
      json: boolean;
      input?: string;
      message?: string;
      interrupt: boolean;
      ui: boolean;
      db?: string;
      /** `--port` (codec-server). */
      port?: number;
      /** `--host` (codec-server). */
      host?: string;
      /** `--cors-origin`, each time given (codec-server). */
      corsOrigins: string[];
      /** `--task-queue` (ui): only the sessions of this task queue. */
      taskQueue?: string;
      /** `--version` (gate): the running version whose sessions are replayed. */
      version?: string;
      /** `--since` (gate): only sessions started this long ago or later, ms. */
      sinceMs?: number;
      /** `--event`, each time given (gate): only these events are replayed. */
      events: string[];
      /**
       * `--versioning` (dev): the worker's `advanced.temporal.versioning`, in place of the
       * module's. @default the module's (else `'auto'`)
       */
      versioning?: 'auto' | 'deployments' | 'off';
    };

/** The values of `--versioning` (`advanced.temporal.versioning`). */
const VERSIONING_MODES: readonly string[] = ['auto', 'deployments', 'off'];

/** The default frontend address when neither `--address` nor `TEMPORAL_ADDRESS` is given. */
const DEFAULT_ADDRESS = '127.0.0.1:7233';

/**
 * `--limit -1` as `--limit=-1`: `parseArgs` takes a value starting with a dash for another
 * option and calls it ambiguous; joined, the option's own check says what is wrong with it.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    const takesValue =
      name !== undefined && (OPTIONS as Record<string, { type: string }>)[name]?.type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * Whether `argv` asks for the version: `-v`, or a `--version` with no value (gate's
 * `--version V` names a version), given with no command.
 */
function asksVersion(argv: readonly string[]): boolean {
  const at = argv.findIndex(
    (arg, i) => arg === '-v' || (arg === '--version' && (argv[i + 1] ?? '-').startsWith('-')),
  );
  if (at < 0) return false;
  const { positionals } = parseArgs({
    args: joinNegativeValues([...argv.slice(0, at), ...argv.slice(at + 1)]),
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
  });
  return positionals.length === 0;
}

/**
 * Parse `argv` (without `node` and the script).
 * @throws {CliError} a usage error (exit 2): unknown command or option, an option the
 *   command does not take, a missing or extra argument, a bad `--limit` or `--timeout`.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ParsedArgs {
  if (asksVersion(argv)) return { kind: 'version' };
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new CliError(`${oneLine(error)}; see durable-agent --help`, { usage: true });
  }
  const { values, positionals, tokens } = parsed;
  const [name, ...args] = positionals;
  if (name === undefined || name === 'help') {
    if (values.help || name === 'help') {
      const topic = args[0];
      return topic !== undefined && isCommand(topic)
        ? { kind: 'help', command: topic }
        : { kind: 'help' };
    }
    throw new CliError(
      `missing command (one of ${Object.keys(COMMANDS).join(', ')}); see durable-agent --help`,
      { usage: true },
    );
  }
  if (!isCommand(name)) {
    throw new CliError(`unknown command '${name}'; see durable-agent --help`, { usage: true });
  }
  if (values.help) return { kind: 'help', command: name };
  const spec = COMMANDS[name];
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    const allowed =
      GLOBAL_OPTIONS.includes(token.name) ||
      (spec.options as readonly string[]).includes(token.name);
    if (!allowed) {
      throw new CliError(`${name} does not take ${token.rawName}; usage: ${usageOf(name)}`, {
        usage: true,
      });
    }
  }
  if (args.length < spec.positionals.length) {
    const missing = spec.positionals[args.length];
    throw new CliError(`${name}: missing <${missing}>; usage: ${usageOf(name)}`, { usage: true });
  }
  if (args.length > spec.positionals.length) {
    const extra = args[spec.positionals.length];
    throw new CliError(`${name}: unexpected argument '${extra}'; usage: ${usageOf(name)}`, {
      usage: true,
    });
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit <= 0) {
      throw new CliError(`--limit must be a positive integer, got '${values.limit}'`, {
        usage: true,
      });
    }
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new CliError(`--port must be a port number (0 to 65535), got '${values.port}'`, {
        usage: true,
      });
    }
  }
  const timeoutMs =
    values.timeout === undefined
      ? name === 'gate'
        ? GATE_TIMEOUT_MS
        : DEFAULT_TIMEOUT_MS
      : parseTimeout(values.timeout);
  const sinceMs =
    values.since === undefined ? undefined : parseDuration('--since', values.since, '30m, 24h, 7d');
  if (values.version !== undefined && values.version.trim() === '') {
    throw new CliError('--version must not be empty', { usage: true });
  }
  if (values.address === '') throw new CliError('--address must not be empty', { usage: true });
  if (
    values.status !== undefined &&
    !(SESSION_LIST_STATUSES as readonly string[]).includes(values.status)
  ) {
    throw new CliError(
      `--status must be one of ${SESSION_LIST_STATUSES.join(', ')}, got '${values.status}'`,
      { usage: true },
    );
  }
  if (values.agent !== undefined && values.agent.trim() === '') {
    throw new CliError('--agent must not be empty', { usage: true });
  }
  if (values.identity !== undefined && values.identity.trim() === '') {
    throw new CliError('--identity must not be empty', { usage: true });
  }
  if (values.versioning !== undefined && !VERSIONING_MODES.includes(values.versioning)) {
    throw new CliError(
      `--versioning must be one of ${VERSIONING_MODES.join(', ')}, got '${values.versioning}'`,
      { usage: true },
    );
  }
  const connection = SERVERLESS_COMMANDS.includes(name)
    ? resolveTemporalConnection(
        { ...(values.namespace ? { namespace: values.namespace } : {}), envConfig: false },
        env,
      )
    : connectionOf(values, env);
  const address = connection.address ?? DEFAULT_ADDRESS;
  connection.address = address;
  return {
    kind: 'command',
    command: name,
    args,
    address,
    addressGiven: values.address !== undefined,
    namespace: connection.namespace,
    connection,
    payloads: values.payloads || DEFAULTS.payloadDir,
    timeoutMs,
    wait: values.wait ?? false,
    json: values.json ?? false,
    interrupt: values.interrupt ?? false,
    ui: values.ui ?? false,
    corsOrigins: values['cors-origin'] ?? [],
    events: values.event ?? [],
    ...(values.version !== undefined ? { version: values.version.trim() } : {}),
    ...(sinceMs !== undefined ? { sinceMs } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(values.status !== undefined ? { status: values.status as SessionListStatus } : {}),
    ...(values.agent !== undefined ? { agent: values.agent.trim() } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}),
    ...(values.input !== undefined ? { input: values.input } : {}),
    ...(values.message !== undefined ? { message: values.message } : {}),
    ...(values.db !== undefined ? { db: values.db } : {}),
    ...(values.identity !== undefined ? { identity: values.identity.trim() } : {}),
    ...(values.versioning !== undefined
      ? { versioning: values.versioning as 'auto' | 'deployments' | 'off' }
      : {}),
  };
}

/**
 * The connection of the flags, the variables and the profile.
 * @throws {CliError} a usage error naming the flag, variable or profile key at fault.
 */
function connectionOf(
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

/** `--timeout`: a number of milliseconds, or a duration with a unit (`500ms`, `10s`, `2m`). */
function parseTimeout(text: string): number {
  return parseDuration('--timeout', text, '500ms, 10s, 2m');
}

/** A positive duration: milliseconds, or with a unit (`500ms`, `10s`, `2m`, `24h`, `7d`). */
function parseDuration(option: string, text: string, examples: string): number {
  let ms: number;
  try {
    ms = msToNumber(text.trim());
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new CliError(
      `${option} must be a positive duration (milliseconds, or ${examples}), got '${text}'`,
      { usage: true },
    );
  }
  return ms;
}

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

const USAGES: Record<CommandName, string> = {
  sessions: 'durable-agent sessions [--status S] [--agent NAME] [--limit N] [--json]',
  inspect: 'durable-agent inspect <sessionId | history.json> [--json]',
  replay: 'durable-agent replay <sessionId | history.json>',
  pending: 'durable-agent pending <sessionId> [--json]',
  approve:
    'durable-agent approve <sessionId> <requestId> [--input JSON] [--wait] [--identity NAME]',
  deny: 'durable-agent deny <sessionId> <requestId> [--message M] [--interrupt] [--wait] [--identity NAME]',
  dev: 'durable-agent dev <module.ts|js> [--ui] [--db FILE] [--versioning auto|deployments|off]',
  golden: 'durable-agent golden <module.ts|js> <recording.json | history.json | folder> [--json]',
  gate: 'durable-agent gate <module.ts|js> [--version V] [--since 24h] [--limit N] [--event E]... [--json]',
  'codec-server': 'durable-agent codec-server [--port N] [--host H] [--cors-origin URL]...',
  ui: 'durable-agent ui [--port N] [--host H] [--task-queue Q] [--identity NAME]',
};

/** One command's usage line. */
function usageOf(command: CommandName): string {
  return USAGES[command];
}

/** The full help text. */
export function helpText(command?: CommandName): string {
  if (command) return `usage: ${usageOf(command)}\n\n${DESCRIPTIONS[command]}\n\n${GLOBALS}`;
  return [
    'durable-agent: inspect and drive durable agent sessions on Temporal',
    '',
    'commands:',
    ...Object.keys(COMMANDS).map((name) => {
      const command = name as CommandName;
      return `  ${usageOf(command)
        .replace(/^durable-agent /, '')
        .padEnd(58)} ${SUMMARIES[command]}`;
    }),
    '',
    GLOBALS,
    '',
    'A <sessionId> may be given as the workflow id the Web UI shows: session-<id>.',
    'From a source checkout: npx tsx src/cli/main.ts <command> ...',
    'Exit status: 0 ok, 1 failure (or replay found nondeterminism), 2 usage error;',
    'golden: 0 no decision changed, 1 some changed, 2 bad input or usage;',
    'gate: 0 no decision flips, 1 some flip, 2 bad input (module, no sessions, server) or usage.',
    'Set DEBUG=1 for stack traces.',
  ].join('\n');
}

const GLOBALS = [
  'global options:',
  `  --address HOST:PORT   Temporal frontend (default: $TEMPORAL_ADDRESS, else ${DEFAULT_ADDRESS})`,
  "  --namespace NAME      namespace (default: $TEMPORAL_NAMESPACE, else the profile's, else default)",
  '  --tls                 connect with TLS (default: $TEMPORAL_TLS, or when any TLS setting or an API key is set)',
  '  --tls-ca-path FILE    CA certificate of the server, PEM ($TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
  '  --tls-server-name N   name the server certificate must carry ($TEMPORAL_TLS_SERVER_NAME)',
  '  --tls-cert-path FILE  client certificate for mTLS, PEM ($TEMPORAL_TLS_CLIENT_CERT_PATH)',
  '  --tls-key-path FILE   client private key for mTLS, PEM ($TEMPORAL_TLS_CLIENT_KEY_PATH)',
  '  --api-key KEY         API key, sent as authorization: Bearer ($TEMPORAL_API_KEY)',
  '  --grpc-meta N=V       gRPC header on every call, repeatable ($TEMPORAL_GRPC_META_<N>)',
  "  --profile NAME        profile of Temporal's config file ($TEMPORAL_PROFILE, else default)",
  "  --config-file FILE    Temporal's config file ($TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml)",
  '                        flags win over variables, variables over the profile (as the temporal CLI)',
  `  --payloads DIR        the agent's payload store, for sessions with offloaded payloads (default: ${DEFAULTS.payloadDir})`,
  `  --timeout T           how long sessions, inspect, replay, pending, approve, deny and gate wait on the server`,
  `                        and on the session's worker, in all: milliseconds, or 500ms, 10s, 2m (default: ${DEFAULT_TIMEOUT_MS / 1000}s)`,
  '  -h, --help            this help',
  '  -v, --version         the version of durable-agent-sdk (with no command)',
  '',
  'environment:',
  `  ${KEYS_VARIABLE}   the key ring of an agent with encryption (keyId:base64Key, comma-separated,`,
  '                        the current key first): inspect, replay, golden, ui and the client commands',
  '                        decrypt with it; codec-server serves it',
  `  ${CODEC_TOKEN_VARIABLE}     the bearer token codec-server requires (at least 16 characters)`,
  `  ${UI_TOKEN_VARIABLE}        the token of ui's pages (at least 16 characters; default: a random one)`,
].join('\n');

const SUMMARIES: Record<CommandName, string> = {
  sessions: 'list sessions, newest first',
  inspect: "a session's hook timeline, from its history",
  replay: 'replay a history against the current workflow code',
  pending: 'permission requests waiting for a person',
  approve: 'allow a pending permission request',
  deny: 'deny a pending permission request',
  dev: 'embedded dev server and a worker for an agent module',
  golden: "check golden sessions against an agent module's current hooks",
  gate: "deploy gate: replay recent sessions' hook inputs through a new definition",
  'codec-server': 'decrypt sessions for the Temporal Web UI (remote codec endpoint)',
  ui: 'session page: sessions by status, hook decisions, approvals inbox',
};

const DESCRIPTIONS: Record<CommandName, string> = {
  sessions:
    'Lists sessions (workflows of type sessionWorkflow) with their status, start and close\n' +
    "time, and the agent and state of each. STATE is the session's own status (search\n" +
    'attribute DurableAgentStatus) while its workflow runs, closed once it completed, else how\n' +
    'Temporal ended it (terminated, timed_out, failed, canceled, continued_as_new): a\n' +
    'terminated or reset workflow keeps its last DurableAgentStatus. --status S lists only\n' +
    `sessions in state S (${SESSION_LIST_STATUSES.join(', ')}), --agent NAME\n` +
    'only those of that agent (both need the search attributes registered: the README says\n' +
    'how). --limit N shows at most N (default 50); --json prints JSON.',
  inspect:
    "Rebuilds a session's hook timeline from its Temporal history (open or closed): one row\n" +
    'per hook dispatch with its decision, reason and duration, the SessionEnd marker and the\n' +
    "final status; then each callback's decision, reason, time and edits (as diffs), and each\n" +
    "tool call's permission (the policy's answer, who approved or denied with what edited\n" +
    'input, the wait, the deadline) and result. Accepts a history file too. --json prints the\n' +
    'timeline as JSON (shape in src/cli/README.md).',
  replay:
    'Replays a session history (fetched by session id, or a file written by historyToJSON or\n' +
    "'temporal workflow show --output json') against the current workflow code and prints\n" +
    "'deterministic: yes' (exit 0) or 'deterministic: NO' with the nondeterminism (exit 1).",
  pending:
    'Lists the permission requests of a session that wait for a person (ask). The list comes\n' +
    "from the session's worker: with no worker polling the session's task queue, it says so\n" +
    '(naming the queue) instead of waiting; with one that does not answer, it gives up after\n' +
    '--timeout.',
  approve:
    'Allows a pending permission request; the tool runs once. --input JSON replaces the\n' +
    "tool's input (a JSON object). The session's worker applies it: when no worker polls the\n" +
    "session's task queue or none answers within --timeout, nothing is sent and approve exits 1\n" +
    'naming the queue. --wait sends it anyway and waits up to --timeout for a worker to apply\n' +
    "it; exit 0 once applied. --identity NAME: who approves, recorded in the session's history\n" +
    '(inspect shows it; default <user>@<host>). A request answered already: the same answer\n' +
    'again exits 0 saying by whom and when it was applied; another answer exits 1.',
  deny:
    'Denies a pending permission request; the model gets --message as the tool error.\n' +
    '--interrupt also stops the running prompt. With no worker, as approve: nothing is sent\n' +
    'unless --wait. --identity NAME as for approve.',
  dev:
    'Starts the embedded Temporal dev server (--ui adds the Web UI, --db FILE keeps its state)\n' +
    "and a worker for the agent module's default export (its AgentOptions), until Ctrl-C.\n" +
    "--versioning auto|deployments|off sets the worker's advanced.temporal.versioning (default:\n" +
    "the module's, else auto: Worker Deployments, which the embedded server has); clients of\n" +
    'the agent must come to the same one.',
  golden:
    "Runs the agent module's current hooks on every dispatch of the golden session recordings\n" +
    '(a file, or every .json in a folder; record them with env.recordGolden) and prints each\n' +
    'decision that changed, before and after. Exit 0: none changed; 1: some did; 2: bad input\n' +
    '(a missing or malformed recording, a module that does not load) or usage. No server needed.\n' +
    'A session history file (from writeHistoryFile or temporal workflow show --output json) is\n' +
    'read as a recording of its dispatches; an encrypted one is decrypted with the key ring.',
  gate:
    "Deploy gate. Lists recent sessions of the agent named by the module's default export\n" +
    "(its name) at the running version (--version V, default: the most recent session's),\n" +
    "fetches every run's history, and runs each recorded hook dispatch's input through the\n" +
    "module's callbacks for that event, as a worker runs them; prints per session every\n" +
    'decision that would flip (dispatch, event, tool, before, after), then a summary.\n' +
    '--since 24h: only sessions started since; --limit N: at most N sessions (default 50, most\n' +
    'recent first); --event E (repeatable): only those events; --json: the report as JSON.\n' +
    'Tools, the model and permission checks never run; callbacks are called for real (their\n' +
    `side effects happen). Encrypted sessions are read with ${KEYS_VARIABLE}.\n` +
    'Exit 0: nothing flips; 1: something flips; 2: bad input (a module that does not load, no\n' +
    'sessions, a server that does not answer, a history that does not decrypt) or usage.\n' +
    `--timeout bounds it all (default ${GATE_TIMEOUT_MS / 1000}s).`,
  'codec-server':
    "Serves Temporal's remote codec protocol (POST /decode, /encode) with the key ring of\n" +
    `${KEYS_VARIABLE}, so the Web UI (--ui-codec-endpoint, or the UI's codec server\n` +
    'setting) and `temporal workflow show --codec-endpoint URL --codec-auth "Bearer <token>"`\n' +
    `show encrypted sessions decrypted. Every request needs Authorization: Bearer $${CODEC_TOKEN_VARIABLE}.\n` +
    `Serves the namespace of --namespace only; offloaded payloads are read from --payloads.\n` +
    `--port (default ${DEFAULT_CODEC_PORT}), --host (default 127.0.0.1); --cors-origin URL, repeatable: the UI\n` +
    `origins browsers may call from (default: ${DEFAULT_CORS_ORIGINS.join(', ')}). Runs until Ctrl-C.`,
  ui:
    'Serves the session page, a small web app: the sessions by status (awaiting approval, running,\n' +
    "idle, closed), each session as turns, hook dispatches, each callback's decision and reason\n" +
    'and the tools, with diffs of what hooks and people changed (what inspect shows), and an\n' +
    'inbox of the permission requests waiting for a person, who approves (optionally with an\n' +
    'edited JSON input) or denies with a message: the same Update as approve/deny, recorded as\n' +
    `ui:<their name>, else --identity (default ui:<user>@<host>). Prints its address with the\n` +
    `token: every page needs it (?token= once, then a cookie; or Authorization: Bearer). The token\n` +
    `is $${UI_TOKEN_VARIABLE}, else a random one. --port (default ${DEFAULT_UI_PORT}), --host (default 127.0.0.1:\n` +
    'loopback; plain HTTP), --limit N sessions listed (default 50), --task-queue Q only the sessions\n' +
    "of that task queue (one agent's), --timeout T per page (default 10s).\n" +
    `Encrypted sessions are read with ${KEYS_VARIABLE}, offloaded payloads from --payloads.\n` +
    'Runs until Ctrl-C.',
};

/** An error's message on one line: its first non-blank line. */
export function oneLine(error: unknown): string {
  const message = messageOf(error);
  const first = message.split('\n').find((line) => line.trim() !== '') ?? message;
  return first.trim();
}
