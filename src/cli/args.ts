/**
 * Command-line parsing of `durable-agent` with `node:util` `parseArgs`: one command of the
 * command table, its positionals, its own options and the global ones. Pure apart from
 * reading the environment's defaults.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { DEFAULTS } from '../common/defaults.js';
import { SESSION_LIST_STATUSES, type SessionListStatus } from '../client/session-status.js';
import { resolveTemporalConnection } from '../temporal/connection-config.js';
import {
  AUDIT_TIMEOUT_MS,
  DEFAULT_ADDRESS,
  DEFAULT_TIMEOUT_MS,
  GATE_TIMEOUT_MS,
} from './cli-defaults.js';
import { CliError, oneLine } from './cli-error.js';
import type { ParsedArgs } from './command-args.js';
import { COMMANDS, isCommand, type CommandName } from './command-table.js';
import { CONNECTION_OPTIONS, connectionOf } from './connection-args.js';

/** Every option `parseArgs` knows; the command table says which command takes which. */
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
  digest: { type: 'string' },
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
  force: { type: 'boolean' },
  key: { type: 'string' },
  pub: { type: 'string' },
  out: { type: 'string' },
  content: { type: 'boolean' },
  query: { type: 'string' },
  session: { type: 'string' },
  history: { type: 'string' },
} as const;

/** The options every command takes. */
export const GLOBAL_OPTIONS = ['address', 'namespace', 'payloads', 'help', ...CONNECTION_OPTIONS];

/** Commands that reach no Temporal server of the user's (no connection settings apply). */
const SERVERLESS_COMMANDS: readonly string[] = ['dev', 'golden', 'init'];

/** The values of `--versioning` (`advanced.temporal.versioning`). */
const VERSIONING_MODES: readonly string[] = ['auto', 'deployments', 'off'];

/** What `parseArgs` makes of a command line with {@link OPTIONS}. */
type Parsed = ReturnType<typeof parseTokens>;

/** The option values of a command line. */
type Values = Parsed['values'];

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
  const { values, positionals, tokens } = parseTokens(argv);
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
  checkCommandLine(name, tokens ?? [], args);
  return commandArgs(name, args, values, env);
}

/** `argv` parsed with every option. @throws {CliError} a usage error when it does not parse. */
function parseTokens(argv: readonly string[]) {
  try {
    return parseArgs({
      args: joinNegativeValues(argv),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new CliError(`${oneLine(error)}; see durable-agent --help`, { usage: true });
  }
}

/**
 * Check that command `name` takes each option given and gets its positionals, no more.
 * @throws {CliError} a usage error naming the command's usage.
 */
function checkCommandLine(
  name: CommandName,
  tokens: NonNullable<Parsed['tokens']>,
  args: readonly string[],
): void {
  const spec = COMMANDS[name];
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const allowed =
      GLOBAL_OPTIONS.includes(token.name) ||
      (spec.options as readonly string[]).includes(token.name);
    if (!allowed) {
      throw new CliError(`${name} does not take ${token.rawName}; usage: ${spec.usage}`, {
        usage: true,
      });
    }
  }
  const positionals: readonly string[] = spec.positionals;
  const optional: readonly string[] = 'optionalPositionals' in spec ? spec.optionalPositionals : [];
  if (args.length < positionals.length) {
    const missing = positionals[args.length];
    throw new CliError(`${name}: missing <${missing}>; usage: ${spec.usage}`, { usage: true });
  }
  if (args.length > positionals.length + optional.length) {
    const extra = args[positionals.length + optional.length];
    throw new CliError(`${name}: unexpected argument '${extra}'; usage: ${spec.usage}`, {
      usage: true,
    });
  }
}

/** The parsed command, its option values checked. @throws {CliError} a usage error. */
function commandArgs(
  name: CommandName,
  args: string[],
  values: Values,
  env: NodeJS.ProcessEnv,
): ParsedArgs {
  const { limit, port, timeoutMs, sinceMs } = numericValues(name, values);
  checkTextValues(values);
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
    force: values.force ?? false,
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
    ...(values.digest !== undefined ? { digest: values.digest.trim().toLowerCase() } : {}),
    ...(values.message !== undefined ? { message: values.message } : {}),
    ...(values.db !== undefined ? { db: values.db } : {}),
    ...(values.identity !== undefined ? { identity: values.identity.trim() } : {}),
    ...(values.versioning !== undefined
      ? { versioning: values.versioning as 'auto' | 'deployments' | 'off' }
      : {}),
    content: values.content ?? false,
    ...auditValues(values),
  };
}

/** The options of `audit-export` and `audit-verify` that name files, a query or a session. */
function auditValues(
  values: Values,
): Partial<Record<'key' | 'pub' | 'out' | 'query' | 'session' | 'history', string>> {
  const out: Partial<Record<'key' | 'pub' | 'out' | 'query' | 'session' | 'history', string>> = {};
  for (const name of ['key', 'pub', 'out', 'query', 'session', 'history'] as const) {
    const value = values[name];
    if (value === undefined) continue;
    if (value.trim() === '') throw new CliError(`--${name} must not be empty`, { usage: true });
    out[name] = value;
  }
  return out;
}

/**
 * `--limit`, `--port`, `--timeout` (its default by command) and `--since`, as numbers.
 * @throws {CliError} a usage error naming the option.
 */
function numericValues(
  name: CommandName,
  values: Values,
): { limit?: number; port?: number; timeoutMs: number; sinceMs?: number } {
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
        : name === 'audit-export' || name === 'audit-verify'
          ? AUDIT_TIMEOUT_MS
          : DEFAULT_TIMEOUT_MS
      : parseTimeout(values.timeout);
  const sinceMs =
    values.since === undefined ? undefined : parseDuration('--since', values.since, '30m, 24h, 7d');
  return {
    ...(limit !== undefined ? { limit } : {}),
    ...(port !== undefined ? { port } : {}),
    timeoutMs,
    ...(sinceMs !== undefined ? { sinceMs } : {}),
  };
}

/**
 * Check the options that take a text: not empty, or one of their values.
 * @throws {CliError} a usage error naming the option.
 */
function checkTextValues(values: Values): void {
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
