/**
 * The commands of `durable-agent`. Each writes its result to `out` and returns the exit
 * code, or throws a {@link CliError} (reported as one line by the entry point).
 *
 * @module
 */
import { DEFAULTS } from '../common/defaults.js';
import { listSessionSummaries, type SessionSummary } from '../client.js';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, type Connection } from '@temporalio/client';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import {
  AgentSdkError,
  SessionClosedError,
  SessionNotFoundError,
  TemporalConnectionError,
} from '../common/errors.js';
import { connectTemporalClient, type ConnectionHints } from '../connection.js';
import { RoutingLogger, resolveLogLevel } from '../logging.js';
import type { JsonObject } from '../common/json.js';
import { sessionWorkflowId } from '../common/protocol.js';
import type { AgentOptions } from '../options.js';
import { Session } from '../session.js';
import { CliError, oneLine, type ParsedArgs } from './args.js';
import { timelineFromHistory } from './history-timeline.js';
import { describeNondeterminism } from './nondeterminism.js';
import { formatTable, formatTime, renderTimeline, truncate } from './render.js';

/** A parsed command (not help). */
export type CommandArgs = Extract<ParsedArgs, { kind: 'command' }>;

/** Where commands write. */
export interface CliOutput {
  /** Results (stdout). */
  out: (text: string) => void;
  /** Progress and notes (stderr). */
  err: (text: string) => void;
}

/** How long to wait for the Temporal frontend before giving up, ms. */
export const CONNECT_TIMEOUT_MS = 3000;

/** Run one command. @returns the exit code. */
export async function runCommand(args: CommandArgs, io: CliOutput): Promise<number> {
  switch (args.command) {
    case 'sessions':
      return withClient(args, (client) => sessions(client, args, io));
    case 'inspect':
      return inspect(args, io);
    case 'replay':
      return replay(args, io);
    case 'pending':
      return withClient(args, (client) => pending(client, args, io));
    case 'approve':
    case 'deny':
      return withClient(args, (client) => decide(client, args, io));
    case 'dev':
      return dev(args, io);
    case 'golden':
      return golden(args, io);
  }
}

/** How the CLI's messages say where the address and namespace come from. */
const CLI_CONNECTION_HINTS: ConnectionHints = {
  address: '--address HOST:PORT (or TEMPORAL_ADDRESS)',
  namespace: '--namespace NAME (or TEMPORAL_NAMESPACE)',
};

/** Connect with a short timeout (and check the namespace), run `body`, close the connection. */
async function withClient<T>(args: CommandArgs, body: (client: Client) => Promise<T>): Promise<T> {
  let connection: Connection;
  try {
    connection = await connectTemporalClient(args.address, args.namespace, {
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      hints: CLI_CONNECTION_HINTS,
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
    throw new CliError(
      `cannot reach Temporal at ${args.address}: ${reason}; check that a server runs there ` +
        `and pass ${CLI_CONNECTION_HINTS.address}`,
      { cause: error },
    );
  }
  try {
    const dataConverter = await payloadDataConverter(args);
    return await body(new Client({ connection, namespace: args.namespace, dataConverter }));
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * The data converter of the CLI's clients and replays: payloads a long session moved to its
 * payload store (references in history) are read back from `--payloads`.
 */
async function payloadDataConverter(args: CommandArgs) {
  const [{ dataConverterOf }, { fileStore }] = await Promise.all([
    import('../payloads/data-converter.js'),
    import('../payloads/store.js'),
  ]);
  return dataConverterOf({
    payloadStore: fileStore(args.payloads),
    offloadPayloadBytes: DEFAULTS.offloadPayloadBytes,
  });
}

async function sessions(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  let rows: SessionSummary[];
  try {
    rows = await listSessionSummaries(client, args.limit ?? 50);
  } catch (error) {
    throw serverError(error, args);
  }
  if (args.json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  if (rows.length === 0) {
    io.out(`no sessions in namespace '${args.namespace}'`);
    return 0;
  }
  io.out(
    formatTable(
      ['SESSION', 'STATUS', 'STARTED', 'CLOSED'],
      rows.map((r) => [r.sessionId, r.status, formatTime(r.startTime), formatTime(r.closeTime)]),
    ),
  );
  return 0;
}

async function inspect(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  const history = isHistoryFile(target)
    ? loadHistoryFile(target)
    : await withClient(args, (client) => fetchSessionHistory(client, target, args));
  let timeline;
  try {
    timeline = timelineFromHistory(history);
  } catch (error) {
    throw new CliError(`${target}: ${oneLine(error)}`, { cause: error });
  }
  io.out(args.json ? JSON.stringify(timeline, null, 2) : renderTimeline(timeline));
  return 0;
}

async function replay(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  const fromFile = isHistoryFile(target);
  const history = fromFile
    ? loadHistoryFile(target)
    : await withClient(args, (client) => fetchSessionHistory(client, target, args));
  const workflowId = fromFile ? target : sessionWorkflowId(target);
  // Loaded here: the worker's native runtime costs startup time other commands need not pay.
  const [{ Worker }, { workflowBundle }] = await Promise.all([
    import('@temporalio/worker'),
    import('../workflow-code.js'),
  ]);
  await installReplayRuntime();
  try {
    await Worker.runReplayHistory(
      { workflowBundle: await workflowBundle(), dataConverter: await payloadDataConverter(args) },
      history,
      workflowId,
    );
  } catch (error) {
    const name = (error as { name?: unknown } | undefined)?.name;
    if (name === 'DeterminismViolationError') {
      const report = describeNondeterminism(
        error instanceof Error ? error.message : String(error),
        history,
      );
      io.out('deterministic: NO');
      io.out(
        report.eventId !== undefined
          ? `  where: history event ${report.eventId}${report.eventType ? ` (${report.eventType})` : ''}`
          : '  where: not named by the error',
      );
      io.out(`  why: ${report.message}`);
      return 1;
    }
    throw new CliError(`replay of ${target} failed: ${oneLine(error)}`, { cause: error });
  }
  io.out('deterministic: yes');
  return 0;
}

async function pending(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  const session = await sessionOf(client, args);
  let requests;
  try {
    requests = await session.pendingPermissions();
  } catch (error) {
    throw sessionError(error, args);
  }
  if (args.json) {
    io.out(JSON.stringify(requests, null, 2));
    return 0;
  }
  if (requests.length === 0) {
    io.out(`no pending permission requests in session '${session.id}'`);
    return 0;
  }
  io.out(
    formatTable(
      ['REQUEST', 'TOOL', 'KIND', 'INPUT', 'ASKED', 'DEADLINE'],
      requests.map((r) => [
        r.requestId,
        r.toolName,
        r.toolKind,
        truncate(JSON.stringify(r.input), 60),
        formatTime(r.askedAt),
        formatTime(r.deadline),
      ]),
    ),
  );
  return 0;
}

async function decide(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  const [, requestId] = args.args as [string, string];
  let updatedInput: JsonObject | undefined;
  if (args.input !== undefined) updatedInput = parseInputOption(args.input);
  const session = await sessionOf(client, args);
  try {
    if (args.command === 'approve') {
      await session.approve(requestId, updatedInput ? { updatedInput } : {});
      io.out(`approved ${requestId} in session ${session.id}`);
    } else {
      await session.deny(requestId, {
        ...(args.message !== undefined ? { message: args.message } : {}),
        ...(args.interrupt ? { interrupt: true } : {}),
      });
      io.out(`denied ${requestId} in session ${session.id}${args.interrupt ? ' (interrupt)' : ''}`);
    }
  } catch (error) {
    throw sessionError(error, args);
  }
  return 0;
}

/** `--input`: a JSON object. */
function parseInputOption(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--input is not valid JSON: ${oneLine(error)}`, { usage: true });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('--input must be a JSON object, e.g. \'{"file_path":"a.txt"}\'', {
      usage: true,
    });
  }
  return value as JsonObject;
}

async function dev(args: CommandArgs, io: CliOutput): Promise<number> {
  if (args.addressGiven) {
    throw new CliError('dev starts its own server: --address does not apply', { usage: true });
  }
  const modulePath = resolve(args.args[0]!);
  if (!existsSync(modulePath)) throw new CliError(`no such file: ${args.args[0]}`);
  const options = await loadAgentModule(modulePath, args.args[0]!);
  const [{ startDevServer }, { createAgentWorker }] = await Promise.all([
    import('../server/dev-server.js'),
    import('../agent.js'),
  ]);

  // The dev server installs signal handlers that kill it and exit at once; ours stop the
  // worker first, so in-flight activities finish. The server's 'exit' hook stays as a net.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.rawListeners(s))]));
  const server = await startDevServer({
    namespace: args.namespace,
    ...(args.ui ? { ui: true } : {}),
    ...(args.db !== undefined ? { dbFilename: resolve(args.db) } : {}),
    log: (line) => io.err(line),
  });
  for (const signal of signals) {
    for (const listener of process.rawListeners(signal)) {
      if (!before.get(signal)!.has(listener)) {
        process.removeListener(signal, listener as (...a: unknown[]) => void);
      }
    }
  }
  let stopRequested!: (signal: string) => void;
  const stopping = new Promise<string>((resolveStop) => (stopRequested = resolveStop));
  // A second signal while stopping: stop the server now and leave.
  const forceStop = () => void server.stop().finally(() => process.exit(130));
  const onSignal = (signal: NodeJS.Signals) => {
    for (const s of signals) {
      process.removeListener(s, onSignal);
      process.once(s, forceStop);
    }
    stopRequested(signal);
  };
  for (const signal of signals) process.on(signal, onSignal);

  let worker;
  try {
    worker = await createAgentWorker({
      ...options,
      advanced: {
        ...options.advanced,
        temporal: {
          ...options.advanced?.temporal,
          address: server.address,
          namespace: args.namespace,
        },
      },
    });
  } catch (error) {
    await server.stop();
    throw error;
  }
  io.out(`Temporal dev server: ${server.address} (namespace ${args.namespace})`);
  if (server.uiUrl) io.out(`Web UI: ${server.uiUrl}`);
  io.out(`Worker: ${args.args[0]} on task queue '${worker.taskQueue}'`);
  io.out(`Try: durable-agent sessions --address ${server.address}`);
  io.out('Press Ctrl-C to stop.');

  const crashed = worker.done.then(
    () => ({ failed: false, why: 'the worker stopped' }),
    (error: unknown) => ({ failed: true, why: `the worker failed: ${oneLine(error)}` }),
  );
  const end = await Promise.race([
    stopping.then((signal) => ({ failed: false, why: signal })),
    crashed,
  ]);
  if (end.failed) {
    await server.stop();
    throw new CliError(end.why);
  }
  io.err(`stopping (${end.why}) ...`);
  await worker.shutdown().catch(() => undefined);
  await server.stop();
  io.err('stopped');
  return 0;
}

/** Import the agent module and return its default export, checked to look like AgentOptions. */
/** Check golden session recordings against the module's hooks; exit 1 when any changed. */
async function golden(args: CommandArgs, io: CliOutput): Promise<number> {
  const modulePath = resolve(args.args[0]!);
  if (!existsSync(modulePath)) throw new CliError(`no such file: ${args.args[0]}`);
  const target = resolve(args.args[1]!);
  if (!existsSync(target)) throw new CliError(`no such file or folder: ${args.args[1]}`);
  const files = statSync(target).isDirectory()
    ? readdirSync(target)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(target, f))
    : [target];
  if (files.length === 0) throw new CliError(`no .json recordings in ${args.args[1]}`);
  const options = await loadAgentModule(modulePath, args.args[0]!);
  const { checkGoldenSession, formatGoldenChanges, readGoldenSession } =
    await import('../testing/golden.js');
  const hooks = options.advanced?.hooks ?? {};
  const reports = [];
  for (const file of files) {
    let recording;
    try {
      recording = readGoldenSession(file);
    } catch (error) {
      throw new CliError(oneLine(error), { cause: error });
    }
    reports.push({ file, ...(await checkGoldenSession(recording, hooks)) });
  }
  const changed = reports.filter((r) => r.changes.length > 0);
  if (args.json) {
    io.out(JSON.stringify(reports, null, 2));
  } else {
    for (const report of reports) {
      const name = relative(process.cwd(), report.file) || report.file;
      io.out(
        report.changes.length === 0
          ? `${name}: ${report.checked} decisions, none changed`
          : `${name}: ${report.changes.length} of ${report.checked} decisions changed\n${formatGoldenChanges(report.changes)}`,
      );
    }
  }
  return changed.length > 0 ? 1 : 0;
}

async function loadAgentModule(path: string, shown: string): Promise<AgentOptions> {
  const url = pathToFileURL(path).href;
  if (/\.[cm]?tsx?$/.test(path) && !tsxActive()) {
    // A TypeScript module under plain node (the built CLI): load it through tsx if installed.
    try {
      const api = (await import('tsx/esm/api' as string)) as { register: () => unknown };
      api.register();
    } catch (error) {
      throw new CliError(
        `cannot load ${shown}: TypeScript modules need tsx (npm i -D tsx), or run ` +
          `node --import tsx (${oneLine(error)})`,
        { cause: error },
      );
    }
  }
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (error) {
    const hint = /require\(\)/.test(oneLine(error))
      ? ' (the SDK is ESM: name the module .mts/.mjs or set "type": "module" in its package.json)'
      : '';
    throw new CliError(`cannot load ${shown}: ${oneLine(error)}${hint}`, { cause: error });
  }
  let options = mod.default;
  // A module compiled as CommonJS shows its `export default` one level down.
  if (isObject(options) && !('model' in options) && isObject(options.default)) {
    options = options.default;
  }
  if (typeof options !== 'object' || options === null || !('model' in options)) {
    throw new CliError(
      `${shown} must export the agent's options as default: export default { model, ... }`,
    );
  }
  return options as AgentOptions;
}

/** Whether tsx already loads TypeScript in this process (`npx tsx`, `node --import tsx`). */
function tsxActive(): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /\btsx\b/.test(arg));
}

/** Whether a target names a history file rather than a session. */
function isHistoryFile(target: string): boolean {
  return target.endsWith('.json') || existsSync(target);
}

/**
 * Read a history file (from `historyToJSON` or `temporal workflow show --output json`).
 * @throws {CliError} when it cannot be read or is not a workflow history.
 */
export function loadHistoryFile(path: string): History {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CliError(
      code === 'ENOENT' ? `no such file: ${path}` : `cannot read ${path}: ${oneLine(error)}`,
      { cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not JSON: ${collapsed(error)}`, { cause: error });
  }
  let history: History;
  try {
    history = historyFromJSON(json);
  } catch (error) {
    throw new CliError(`${path} is not a Temporal history: ${oneLine(error)}`, { cause: error });
  }
  if (!history.events?.[0]?.workflowExecutionStartedEventAttributes) {
    throw new CliError(
      `${path} is not a Temporal history: its first event is not WorkflowExecutionStarted`,
    );
  }
  return history;
}

async function fetchSessionHistory(
  client: Client,
  sessionId: string,
  args: CommandArgs,
): Promise<History> {
  try {
    return await client.workflow.getHandle(sessionWorkflowId(sessionId)).fetchHistory();
  } catch (error) {
    if (isNotFound(error) && !isNamespaceError(error)) throw noSession(sessionId, args);
    throw serverError(error, args);
  }
}

/** A session handle, checked to exist. */
async function sessionOf(client: Client, args: CommandArgs): Promise<Session> {
  const sessionId = args.args[0]!;
  const handle = client.workflow.getHandle(sessionWorkflowId(sessionId));
  try {
    await handle.describe();
  } catch (error) {
    if (isNotFound(error) && !isNamespaceError(error)) throw noSession(sessionId, args);
    throw serverError(error, args);
  }
  return new Session(sessionId, handle);
}

function noSession(sessionId: string, args: CommandArgs): CliError {
  return new CliError(
    `no session '${sessionId}' in namespace '${args.namespace}' at ${args.address}`,
  );
}

/** The SDK's errors as one line, with the session's words. */
function sessionError(error: unknown, args: CommandArgs): CliError {
  if (error instanceof SessionNotFoundError) return noSession(args.args[0]!, args);
  if (error instanceof SessionClosedError) {
    return new CliError(`session '${args.args[0]}' is closed`, { cause: error });
  }
  if (error instanceof AgentSdkError) return new CliError(oneLine(error), { cause: error });
  return serverError(error, args);
}

function serverError(error: unknown, args: CommandArgs): CliError {
  if (isNamespaceError(error)) {
    return new CliError(`namespace '${args.namespace}' not found at ${args.address}`, {
      cause: error,
    });
  }
  return new CliError(oneLine(error), { cause: error });
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown; cause?: { code?: unknown } } | undefined;
  return e?.name === 'WorkflowNotFoundError' || e?.code === 5 || e?.cause?.code === 5;
}

function isNamespaceError(error: unknown): boolean {
  const e = error as { name?: unknown } | undefined;
  return e?.name === 'NamespaceNotFoundError' || /namespace .*not found/i.test(oneLine(error));
}

let runtimeInstalled = false;

/**
 * Replay runs a worker: Temporal's own lines at ERROR, one line each, unless
 * `DURABLE_AGENT_LOG_LEVEL` asks for more.
 * @throws {ConfigError} when `DURABLE_AGENT_LOG_LEVEL` is not a level.
 */
async function installReplayRuntime(): Promise<void> {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const { Runtime } = await import('@temporalio/worker');
  const level = resolveLogLevel(undefined, process.env, 'ERROR');
  try {
    Runtime.install({
      logger: new RoutingLogger(level),
      telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // A runtime exists already.
  }
}

/** An error's message with every line break collapsed (for messages quoting input). */
function collapsed(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').trim();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
