/**
 * The commands of `durable-agent`. Each writes its result to `out` and returns the exit
 * code, or throws a {@link CliError} (reported as one line by the entry point).
 *
 * @module
 */
import { DEFAULTS } from '../common/defaults.js';
import { listSessionSummaries, type SessionSummary } from '../client/list-sessions.js';
import { hostname, userInfo } from 'node:os';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, type Connection } from '@temporalio/client';
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import {
  AgentSdkError,
  ConfigError,
  SessionClosedError,
  SessionNotFoundError,
  TemporalConnectionError,
  messageOf,
} from '../common/errors.js';
import { connectTemporalClient, type ConnectionHints } from '../temporal/connection.js';
import { resolveLogLevel } from '../temporal/logging.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import type { PendingPermission, PermissionAnswer } from '../common/permission.js';
import { Queries, sessionWorkflowId } from '../common/protocol.js';
import type { AgentOptions } from '../definition/options.js';
import { isNoPollerError } from '../temporal/query.js';
import { Session } from '../client/session.js';
import { isTransientTaskFailure } from '../client/update-calls.js';
import {
  decodeHistoryPayloads,
  hasWorkflowTask,
  sessionIdOfHistory,
  storedPayloadEventIds,
} from '../history/decode.js';
import type { EncryptionKeyRing } from '../payloads/encryption.js';
import { findSessionWorkflow, parseHistoryFile, type FoundSession } from '../history/files.js';
import {
  CODEC_TOKEN_VARIABLE,
  CliError,
  DEFAULT_CODEC_PORT,
  DEFAULT_CORS_ORIGINS,
  DEFAULT_UI_PORT,
  UI_TOKEN_VARIABLE,
  oneLine,
  type ParsedArgs,
} from './args.js';
import { timelineFromHistory } from '../history/timeline.js';
import { answeredAlike, describeDecidedRequest } from '../history/decided.js';
import { describeNondeterminism } from '../history/nondeterminism.js';
import { formatTable, formatTime, renderTimeline, truncate } from './render.js';
import { describePollers, formatDuration, pollersOf, type QueuePollers } from './workers.js';

/** A parsed command (not help), with the time its waits end (`--timeout` from its start). */
export type CommandArgs = Extract<ParsedArgs, { kind: 'command' }> & { deadline?: number };

/** Where commands write. */
export interface CliOutput {
  /** Results (stdout). */
  out: (text: string) => void;
  /** Progress and notes (stderr). */
  err: (text: string) => void;
}

/** After this long, `approve --wait` / `deny --wait` say that they wait for a worker, ms. */
const WAITING_NOTE_AFTER_MS = 1000;

/** Run one command. @returns the exit code. */
export async function runCommand(args: CommandArgs, io: CliOutput): Promise<number> {
  // One bound for every wait of the command (connect, server calls, the worker's answer).
  const deadline = Date.now() + args.timeoutMs;
  args = { ...args, deadline };
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
    case 'gate':
      return gate(args, io);
    case 'codec-server':
      return codecServer(args, io);
    case 'ui':
      return sessionUi(args, io);
  }
}

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

/**
 * Connect with a short timeout (and check the namespace), run `body` with every server call
 * bounded by the command's deadline, close the connection.
 */
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

async function withClient<T>(args: CommandArgs, body: (client: Client) => Promise<T>): Promise<T> {
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
async function openClient(args: CommandArgs): Promise<{ client: Client; connection: Connection }> {
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

function deadlineOf(args: CommandArgs): number {
  return args.deadline ?? Date.now() + args.timeoutMs;
}

function remainingMs(args: CommandArgs): number {
  return deadlineOf(args) - Date.now();
}

/** Whether `error` is a call ended by the command's deadline. */
function isDeadline(error: unknown, args: CommandArgs): boolean {
  if (remainingMs(args) > 250) return false;
  for (let e: unknown = error, depth = 0; e && depth < 8; depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    // gRPC DEADLINE_EXCEEDED and CANCELLED (how the client ends a call at its deadline).
    if (code === 4 || code === 1 || name === 'WorkflowUpdateRPCTimeoutOrCancelledError') {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The error for a server that did not answer in time. */
function serverTimeout(args: CommandArgs, what: string, error: unknown): CliError {
  return new CliError(
    `no answer from Temporal at ${args.address} within ${formatDuration(args.timeoutMs)} ` +
      `(${what}); pass a longer --timeout`,
    { cause: error },
  );
}

/**
 * The data converter of the CLI's clients and replays: payloads a long session moved to its
 * payload store (references in history) are read back from `--payloads`, and encrypted ones
 * are opened with the key ring of `DURABLE_AGENT_ENCRYPTION_KEYS` (none set: an encrypted
 * payload is a clear error naming its key id).
 */
async function payloadDataConverter(args: CommandArgs): Promise<DataConverter> {
  return { payloadCodecs: await historyCodecs(args) };
}

/** The codecs a history of an agent is read with (see {@link payloadDataConverter}). */
async function historyCodecs(args: CommandArgs): Promise<PayloadCodec[]> {
  const [{ encryptedCodecs }, { fileStore }] = await Promise.all([
    import('../payloads/data-converter.js'),
    import('../payloads/store.js'),
  ]);
  return encryptedCodecs(await keyRing(), {
    payloadStore: fileStore(args.payloads),
    offloadPayloadBytes: DEFAULTS.offloadPayloadBytes,
  });
}

/**
 * The key ring of `DURABLE_AGENT_ENCRYPTION_KEYS`, `undefined` when unset.
 * @throws {CliError} when the variable is malformed (naming the entry, never a key).
 */
async function keyRing(): Promise<EncryptionKeyRing | undefined> {
  const { keyRingFromEnv } = await import('../payloads/encryption.js');
  try {
    return keyRingFromEnv(process.env);
  } catch (error) {
    throw new CliError(oneLine(error), { cause: error });
  }
}

/**
 * `history` with its payloads decoded (decrypted, offloaded ones read back), for the
 * readers that decode with the payload converter alone (timeline, golden).
 * @throws {CliError} naming `target` and the key id when a payload does not open, or the
 *   reference when a stored payload is missing.
 */
async function decodedHistory(
  history: History,
  args: CommandArgs,
  target: string,
): Promise<History> {
  const codecs = await historyCodecs(args);
  try {
    return await decodeHistoryPayloads(history, codecs);
  } catch (error) {
    if (error instanceof AgentSdkError) {
      throw new CliError(`${target}: cannot read its payloads: ${oneLine(error)}`, {
        cause: error,
      });
    }
    throw error;
  }
}

async function sessions(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  let rows: SessionSummary[];
  try {
    rows = await listSessionSummaries(client, args.limit ?? 50, {
      ...(args.status !== undefined ? { status: args.status } : {}),
      ...(args.agent !== undefined ? { agentName: args.agent } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, { cause: error });
    if (isDeadline(error, args)) throw serverTimeout(args, 'listing sessions', error);
    throw serverError(error, args);
  }
  if (args.json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  if (rows.length === 0) {
    const filtered = [
      ...(args.status !== undefined ? [`status ${args.status}`] : []),
      ...(args.agent !== undefined ? [`agent '${args.agent}'`] : []),
    ];
    io.out(
      `no sessions${filtered.length > 0 ? ` of ${filtered.join(', ')}` : ''} in namespace '${args.namespace}'`,
    );
    return 0;
  }
  io.out(
    formatTable(
      ['SESSION', 'STATUS', 'STARTED', 'CLOSED', 'AGENT', 'STATE'],
      rows.map((r) => [
        r.sessionId,
        r.status,
        formatTime(r.startTime),
        formatTime(r.closeTime),
        r.agentName ?? '-',
        // Not agentStatus alone: a terminated or reset workflow keeps its last one.
        r.sessionStatus ?? '-',
      ]),
    ),
  );
  return 0;
}

async function inspect(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  const { history: recorded } = isHistoryFile(target)
    ? { history: loadHistoryFile(target) }
    : await withClient(args, (client) => fetchSessionHistory(client, target, args));
  const history = await decodedHistory(recorded, args, target);
  let timeline;
  try {
    timeline = timelineFromHistory(history, {
      storedPayloadEventIds: storedPayloadEventIds(recorded),
    });
  } catch (error) {
    throw new CliError(`${target}: ${oneLine(error)}`, { cause: error });
  }
  io.out(args.json ? JSON.stringify(timeline, null, 2) : renderTimeline(timeline));
  return 0;
}

async function replay(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  let history: History;
  let workflowId: string;
  if (isHistoryFile(target)) {
    history = await decodedHistory(loadHistoryFile(target), args, target);
    const sessionId = sessionIdOfHistory(history);
    workflowId = sessionId !== undefined ? sessionWorkflowId(sessionId) : target;
  } else {
    ({ history, workflowId } = await withClient(args, (client) =>
      fetchSessionHistory(client, target, args),
    ));
    // Decoded here, not by the replayer: a payload that does not open is a clear error
    // naming its key id, not a workflow task failure.
    history = await decodedHistory(history, args, target);
  }
  if (!hasWorkflowTask(history)) {
    // Temporal's replayer would wait forever on it.
    io.out('deterministic: yes (no workflow task has run yet: nothing to replay)');
    return 0;
  }
  // Loaded here: the worker's native runtime costs startup time other commands need not pay.
  const [{ Worker }, { workflowBundle }] = await Promise.all([
    import('@temporalio/worker'),
    import('../worker/workflow-code.js'),
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
      const report = describeNondeterminism(messageOf(error), history);
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
  const found = await sessionOf(client, args);
  let requests: PendingPermission[] = [];
  if (found.description.status.name === 'RUNNING') {
    const pollers = await workflowPollers(client, found, args);
    // The list lives in the workflow: only a worker can answer for it.
    if (pollers.count === 0) {
      throw new CliError(
        `session '${found.sessionId}' has no worker: ${describePollers(pollers)}; ` +
          "its permission requests are read through the agent's worker: start it, then run pending again",
      );
    }
    try {
      requests = await client.workflow
        .getHandle(found.workflowId)
        .query(Queries.pendingPermissions);
    } catch (error) {
      if (isDeadline(error, args) || isNoPollerError(error)) {
        throw await noAnswer(client, found, args, error);
      }
      throw sessionError(error, args, found.sessionId);
    }
  }
  if (args.json) {
    io.out(JSON.stringify(requests, null, 2));
    return 0;
  }
  if (requests.length === 0) {
    io.out(`no pending permission requests in session '${found.sessionId}'`);
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

/**
 * `approve` / `deny`: an Update, which only a worker of the session can accept. Without
 * `--wait`, a session no worker answers for is refused before anything is sent; with it,
 * the answer is sent and waited for until the deadline.
 */
async function decide(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  const [, requestId] = args.args as [string, string];
  let updatedInput: JsonObject | undefined;
  if (args.input !== undefined) updatedInput = parseInputOption(args.input);
  const found = await sessionOf(client, args);
  if (found.description.status.name !== 'RUNNING') {
    throw new CliError(
      `session '${found.sessionId}' is closed (${found.description.status.name}): nothing was sent`,
    );
  }
  const verb = args.command === 'approve' ? 'approval' : 'denial';
  const answer: PermissionAnswer =
    args.command === 'approve'
      ? { behavior: 'allow', ...(updatedInput ? { updatedInput } : {}) }
      : {
          behavior: 'deny',
          ...(args.message !== undefined ? { message: args.message } : {}),
          ...(args.interrupt ? { interrupt: true } : {}),
        };
  const handle = client.workflow.getHandle(found.workflowId);
  const session = new Session(found.sessionId, handle);
  // The queue the session's activities (the tool, the model) go to: the workflow's own
  // until a handoff moves them, which the workflow's description says.
  let activityQueue = found.description.taskQueue;
  if (!args.wait) {
    const pollers = await workflowPollers(client, found, args);
    if (pollers.count === 0) {
      throw new CliError(
        `session '${found.sessionId}' has no worker: ${describePollers(pollers)}; nothing was sent. ` +
          `The ${verb} is applied by the agent's worker: start it and run ${args.command} again, ` +
          'or pass --wait to send it and wait for a worker (up to --timeout)',
      );
    }
    let waiting: PendingPermission[];
    try {
      const described = await handle.query(Queries.describe);
      if (typeof described?.taskQueue === 'string') activityQueue = described.taskQueue;
      waiting = await handle.query(Queries.pendingPermissions);
    } catch (error) {
      if (isDeadline(error, args) || isNoPollerError(error)) {
        throw await noAnswer(client, found, args, error, true);
      }
      throw sessionError(error, args, found.sessionId);
    }
    // Decided already: the same answer again is done (as the API's deduplicated Update
    // is), any other answer refused; either way the history says how it was decided.
    if (!waiting.some((r) => r.requestId === requestId)) {
      const decided = await notPending(client, found, requestId, args, answer);
      if (!decided.alike) throw new CliError(`${decided.why}; nothing was sent`);
      io.out(`${decided.why}: the same answer, applied once; nothing was sent`);
      return 0;
    }
  }
  const send = () =>
    answer.behavior === 'allow'
      ? session.approve(requestId, answer.updatedInput ? { updatedInput: answer.updatedInput } : {})
      : session.deny(requestId, answer);
  // With --wait, what the session's own retries give up on after 40 s (a workflow task in
  // failed state, an Update the server aborted: a worker still starting on a loaded machine)
  // is sent again until the deadline; the same update id applies it once.
  const sending = (async () => {
    for (;;) {
      try {
        return await send();
      } catch (error) {
        if (!args.wait || !isTransientTaskFailure(error) || remainingMs(args) < 1000) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  })();
  let note: NodeJS.Timeout | undefined;
  if (args.wait) {
    note = setTimeout(() => {
      io.err(
        `waiting up to ${formatDuration(remainingMs(args))} for a worker of task queue ` +
          `'${found.description.taskQueue}' to apply the ${verb} ...`,
      );
    }, WAITING_NOTE_AFTER_MS);
  }
  try {
    await sending;
  } catch (error) {
    if (isDeadline(error, args)) {
      const why = await lastLookAtPollers(client, found.description.taskQueue).then((p) =>
        p ? `${describePollers(p)}; ` : '',
      );
      throw new CliError(
        `the ${verb} of ${requestId} was sent to session '${found.sessionId}' but not applied ` +
          `within ${formatDuration(args.timeoutMs)}: ${why}it may still apply when a worker polls ` +
          `'${found.description.taskQueue}' (Temporal holds it in memory, not in the history: a ` +
          `server restart drops it); check with: durable-agent pending ${found.sessionId}`,
        { cause: error },
      );
    }
    if (error instanceof AgentSdkError && error.code === 'PERMISSION_REQUEST_NOT_FOUND') {
      const decided = await notPending(client, found, requestId, args, answer);
      if (!decided.alike) throw new CliError(`${decided.why}; the ${verb} was refused`);
      io.out(`${decided.why}: the same answer, applied once`);
      return 0;
    }
    throw sessionError(error, args, found.sessionId);
  } finally {
    clearTimeout(note);
  }
  io.out(
    args.command === 'approve'
      ? `approved ${requestId} in session ${found.sessionId}`
      : `denied ${requestId} in session ${found.sessionId}${args.interrupt ? ' (interrupt)' : ''}`,
  );
  // What runs next (the tool, the model) are activities: say when nobody would run them.
  const activities = await pollersOf(client, activityQueue, 'activity').catch(() => undefined);
  if (activities?.count === 0) {
    io.err(
      `note: ${describePollers(activities)}: the session's next step (the tool, the model) ` +
        'waits until a worker polls it',
    );
  }
  return 0;
}

/**
 * A request that does not wait (any more): how it was decided, from the session's history
 * (approved or denied by whom and when, expired, cancelled), and whether it was decided with
 * `answer` itself (`alike`: the same answer given again, which is applied once).
 */
async function notPending(
  client: Client,
  found: FoundSession,
  requestId: string,
  args: CommandArgs,
  answer: PermissionAnswer,
): Promise<{ why: string; alike: boolean }> {
  try {
    const recorded = await client.workflow.getHandle(found.workflowId).fetchHistory();
    const history = await decodedHistory(recorded, args, found.sessionId);
    const timeline = timelineFromHistory(history, {
      storedPayloadEventIds: storedPayloadEventIds(recorded),
    });
    return {
      why: describeDecidedRequest(timeline, { requestId }),
      alike: answeredAlike(timeline, { requestId }, answer),
    };
  } catch {
    return {
      why: `no permission request '${requestId}' waits in session '${found.sessionId}'`,
      alike: false,
    };
  }
}

/**
 * The workflow pollers of `taskQueue`, looked at once the command's deadline has passed (for
 * its error message): a call of its own, bounded by 2 s; `undefined` when it fails.
 */
async function lastLookAtPollers(
  client: Client,
  taskQueue: string,
): Promise<QueuePollers | undefined> {
  return client.connection
    .withDeadline(Date.now() + 2000, () => pollersOf(client, taskQueue, 'workflow'))
    .catch(() => undefined);
}

/** The workflow pollers of the session's task queue. */
async function workflowPollers(
  client: Client,
  found: FoundSession,
  args: CommandArgs,
): Promise<QueuePollers> {
  try {
    return await pollersOf(client, found.description.taskQueue, 'workflow');
  } catch (error) {
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `describing task queue '${found.description.taskQueue}'`, error);
    }
    throw serverError(error, args);
  }
}

/**
 * The error for a session whose worker did not answer within the deadline.
 * @param refused whether a decision was refused (nothing sent) for want of an answer.
 */
async function noAnswer(
  client: Client,
  found: FoundSession,
  args: CommandArgs,
  error: unknown,
  refused = false,
): Promise<CliError> {
  const queue = found.description.taskQueue;
  const pollers = await lastLookAtPollers(client, queue);
  const seen = pollers ? ` (${describePollers(pollers)})` : '';
  const next = refused
    ? `nothing was sent; start the agent's worker and run ${args.command} again, or pass --wait ` +
      'to send it and wait for a worker (up to --timeout)'
    : "start the agent's worker, or pass a longer --timeout";
  return new CliError(
    `no answer from session '${found.sessionId}' within ${formatDuration(args.timeoutMs)}: ` +
      `no worker of its task queue '${queue}' answered${seen}; ${next}`,
    { cause: error },
  );
}

/** `--input`: a JSON object. */
function parseInputOption(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--input is not valid JSON: ${oneLine(error)}`, { usage: true });
  }
  if (!isPlainObject(value)) {
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
    import('../agent/agent.js'),
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
          ...(args.versioning !== undefined ? { versioning: args.versioning } : {}),
          address: server.address,
          namespace: args.namespace,
          // The dev server is plain: the module's and the environment's TLS are not for it.
          envConfig: false,
          tls: false,
          apiKey: undefined,
          metadata: undefined,
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
  io.out(
    worker.versioning === 'deployments'
      ? `Routing: Worker Deployment version '${worker.agentName}.${worker.version}' (sessions pinned)`
      : `Routing: unversioned (versioning off)`,
  );
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

/**
 * Check golden session recordings against the module's hooks: exit 0 when no decision
 * changed, 1 when some did, 2 when the check could not run (a missing or malformed
 * recording, a module that does not load): a CI gate tells a policy change from bad input.
 */
async function golden(args: CommandArgs, io: CliOutput): Promise<number> {
  try {
    return await checkGoldenRecordings(args, io);
  } catch (error) {
    throw new CliError(oneLine(error), {
      exitCode: GOLDEN_BAD_INPUT,
      cause: error instanceof CliError ? (error.cause ?? error) : error,
    });
  }
}

/** Exit code of `golden` when it could not check: bad input or usage. */
const GOLDEN_BAD_INPUT = 2;

async function checkGoldenRecordings(args: CommandArgs, io: CliOutput): Promise<number> {
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
  const { checkGoldenSession, formatGoldenChanges, goldenFromHistories, readGoldenSession } =
    await import('../testing/golden.js');
  const hooks = options.advanced?.hooks ?? {};
  const reports = [];
  for (const file of files) {
    let recording;
    const shown = relative(process.cwd(), file) || file;
    const history = historyInFile(file);
    if (history) {
      // A session's history: its dispatches, decrypted with the key ring.
      const decoded = await decodedHistory(history, args, shown);
      recording = goldenFromHistories(sessionIdOfHistory(decoded) ?? shown, [decoded]);
    } else {
      try {
        recording = readGoldenSession(file);
      } catch (error) {
        throw new CliError(oneLine(error), { cause: error });
      }
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

/**
 * The deploy gate: replay recent sessions' recorded hook inputs through the module's
 * definition; exit 0 when no decision flips, 1 when some do, 2 when the gate could not run
 * (a module that does not load or is not valid agent options, no sessions of the agent, a
 * server that does not answer, a history that does not decrypt): a CI gate tells a policy
 * change from bad input.
 */
async function gate(args: CommandArgs, io: CliOutput): Promise<number> {
  try {
    return await runGate(args, io);
  } catch (error) {
    throw new CliError(oneLine(error), {
      exitCode: GATE_BAD_INPUT,
      cause: error instanceof CliError ? (error.cause ?? error) : error,
    });
  }
}

/** Exit code of `gate` when it could not run: bad input, an unreachable server, or usage. */
const GATE_BAD_INPUT = 2;

async function runGate(args: CommandArgs, io: CliOutput): Promise<number> {
  const shown = args.args[0]!;
  const modulePath = resolve(shown);
  if (!existsSync(modulePath)) throw new CliError(`no such file: ${shown}`);
  const options = await loadAgentModule(modulePath, shown);
  const [{ resolveAgentOptions }, { gateDeploy, formatGateReport }] = await Promise.all([
    import('../definition/options.js'),
    import('../testing/gate.js'),
  ]);
  // Checked before connecting: a bad definition is named as the module's.
  try {
    resolveAgentOptions(options);
  } catch (error) {
    throw new CliError(`${shown}: ${oneLine(error)}`, { cause: error });
  }
  const { isHookEvent } = await import('../common/hook-events.js');
  const events = args.events.map((event) => {
    if (!isHookEvent(event)) {
      throw new CliError(`--event: unknown hook event '${event}'`, { usage: true });
    }
    return event;
  });
  return withClient(args, async (client) => {
    let report;
    try {
      report = await gateDeploy({
        agent: options,
        client,
        ...(args.version !== undefined ? { version: args.version } : {}),
        ...(args.sinceMs !== undefined ? { since: new Date(Date.now() - args.sinceMs) } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(events.length > 0 ? { events } : {}),
      });
    } catch (error) {
      if (isDeadline(error, args)) throw serverTimeout(args, 'reading sessions', error);
      if (error instanceof AgentSdkError) throw new CliError(oneLine(error), { cause: error });
      throw serverError(error, args);
    }
    io.out(args.json ? JSON.stringify(report, null, 2) : formatGateReport(report));
    return report.flipped > 0 ? 1 : 0;
  });
}

/**
 * The workflow history a `.json` file holds (Temporal's history JSON, with an `events`
 * array), or `undefined` when it holds something else (a golden recording) or is not JSON.
 */
function historyInFile(file: string): History | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // readGoldenSession says what is wrong with it
  }
  if (!isObject(parsed) || !Array.isArray(parsed.events)) return undefined;
  return loadHistoryFile(file);
}

/**
 * `codec-server`: the remote codec endpoint for the Web UI and the Temporal CLI, with the key
 * ring of the environment, until a signal.
 */
async function codecServer(args: CommandArgs, io: CliOutput): Promise<number> {
  const ring = await keyRing();
  if (!ring) {
    throw new CliError(
      `codec-server needs the key ring: set DURABLE_AGENT_ENCRYPTION_KEYS (keyId:base64Key, comma-separated, the current key first)`,
    );
  }
  const token = process.env[CODEC_TOKEN_VARIABLE];
  if (!token) {
    throw new CliError(
      `codec-server needs a bearer token: set ${CODEC_TOKEN_VARIABLE} (at least 16 characters; ` +
        `e.g. node -e "console.log(crypto.randomBytes(24).toString('base64url'))")`,
    );
  }
  const [{ createCodecServer }, { fileStore }] = await Promise.all([
    import('../codec-server/index.js'),
    import('../payloads/store.js'),
  ]);
  const port = args.port ?? DEFAULT_CODEC_PORT;
  const corsOrigins = args.corsOrigins.length > 0 ? args.corsOrigins : DEFAULT_CORS_ORIGINS;
  let server;
  try {
    server = await createCodecServer({
      keys: ring,
      payloadStore: fileStore(args.payloads),
      token,
      port,
      host: args.host ?? '127.0.0.1',
      corsOrigins,
      namespaces: [args.namespace],
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE') {
      throw new CliError(`port ${port} is in use: pass another --port`, { cause: error });
    }
    throw new CliError(oneLine(error), { cause: error });
  }
  io.out(`codec server: ${server.url} (namespace ${args.namespace})`);
  io.out(`key ids: ${Object.keys(ring.keys).join(', ')} (current: ${ring.currentKeyId})`);
  io.out(`CORS origins: ${corsOrigins.join(', ')}`);
  io.out(`Web UI: temporal server start-dev --ui-codec-endpoint ${server.url}`);
  io.out(
    `CLI: temporal workflow show --workflow-id <id> --codec-endpoint ${server.url} --codec-auth "Bearer $${CODEC_TOKEN_VARIABLE}"`,
  );
  io.out('Press Ctrl-C to stop.');
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const signal = await new Promise<string>((resolveSignal) => {
    for (const s of signals) process.once(s, () => resolveSignal(s));
  });
  io.err(`stopping (${signal}) ...`);
  await server.close();
  return 0;
}

/**
 * `ui`: the session page (src/ui) on this command's connection and key ring, until a signal.
 * The token is `DURABLE_AGENT_UI_TOKEN`'s, else a random one; both are printed in the URL.
 */
async function sessionUi(args: CommandArgs, io: CliOutput): Promise<number> {
  const token = process.env[UI_TOKEN_VARIABLE];
  if (token !== undefined && token.length < 16) {
    throw new CliError(`${UI_TOKEN_VARIABLE} must have at least 16 characters`);
  }
  const { client, connection } = await openClient(args);
  const port = args.port ?? DEFAULT_UI_PORT;
  let ui;
  try {
    const { createSessionUi } = await import('../ui/index.js');
    ui = await createSessionUi({
      client,
      port,
      host: args.host ?? '127.0.0.1',
      timeoutMs: args.timeoutMs,
      ...(token ? { token } : {}),
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      ...(args.taskQueue !== undefined ? { taskQueue: args.taskQueue } : {}),
      ...(args.identity !== undefined ? { identity: args.identity } : {}),
    });
  } catch (error) {
    await connection.close().catch(() => undefined);
    if ((error as { code?: unknown }).code === 'EADDRINUSE') {
      throw new CliError(`port ${port} is in use: pass another --port`, { cause: error });
    }
    throw new CliError(oneLine(error), { cause: error });
  }
  io.out(`session page: ${ui.loginUrl}`);
  io.out(
    `(namespace ${args.namespace} at ${args.address}; open the address once: the token is then kept in a cookie` +
      `${token ? '' : `; set ${UI_TOKEN_VARIABLE} to choose it`})`,
  );
  io.out('Press Ctrl-C to stop.');
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const signal = await new Promise<string>((resolveSignal) => {
    for (const s of signals) process.once(s, () => resolveSignal(s));
  });
  io.err(`stopping (${signal}) ...`);
  await ui.close();
  await connection.close().catch(() => undefined);
  return 0;
}

/** Import the agent module and return its default export, checked to look like AgentOptions. */
async function loadAgentModule(path: string, shown: string): Promise<AgentOptions> {
  const url = pathToFileURL(path).href;
  if (/\.[cm]?tsx?$/.test(path) && !tsxActive()) {
    // A TypeScript module under plain node (the built CLI): load it through tsx if installed,
    // its CommonJS hooks too, as `node --import tsx` does. Without them a .ts module outside
    // a "type": "module" package is read as CommonJS, and Node's require() of it fails
    // ('Cannot require() ES Module ... in a cycle').
    try {
      type Api = { register: () => unknown };
      const [esm, cjs] = (await Promise.all([
        import('tsx/esm/api' as string),
        import('tsx/cjs/api' as string),
      ])) as [Api, Api];
      esm.register();
      cjs.register();
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
 * Read a history file (from `writeHistoryFile`, `historyToJSON` or `temporal workflow show
 * --output json`).
 * @throws {CliError} when it cannot be read or is not a workflow history.
 */
export function loadHistoryFile(path: string): History {
  if (!existsSync(path)) throw new CliError(`no such file: ${path}`);
  try {
    return parseHistoryFile(path);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(oneLine(error), { cause: error });
    throw error;
  }
}

/** The history of a session's newest run, by session id or workflow id. */
async function fetchSessionHistory(
  client: Client,
  target: string,
  args: CommandArgs,
): Promise<{ history: History; workflowId: string }> {
  const found = await sessionOf(client, args, target);
  try {
    return {
      history: await client.workflow.getHandle(found.workflowId).fetchHistory(),
      workflowId: found.workflowId,
    };
  } catch (error) {
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `reading the history of session '${found.sessionId}'`, error);
    }
    throw serverError(error, args);
  }
}

/**
 * Find the session named by the command's first argument: a session id, or its workflow id
 * `session-<id>` (what the Web UI shows).
 */
async function sessionOf(
  client: Client,
  args: CommandArgs,
  target = args.args[0]!,
): Promise<FoundSession> {
  try {
    return await findSessionWorkflow(client, target);
  } catch (error) {
    if (error instanceof SessionNotFoundError) throw noSession(target, args);
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `looking up session '${target}'`, error);
    }
    throw serverError(error, args);
  }
}

function noSession(sessionId: string, args: CommandArgs): CliError {
  return new CliError(
    `no session '${sessionId}' in namespace '${args.namespace}' at ${args.address}`,
  );
}

/** The SDK's errors as one line, with the session's words. */
function sessionError(error: unknown, args: CommandArgs, sessionId: string): CliError {
  if (error instanceof SessionNotFoundError) return noSession(sessionId, args);
  if (error instanceof SessionClosedError) {
    return new CliError(`session '${sessionId}' is closed`, { cause: error });
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

function isNamespaceError(error: unknown): boolean {
  const e = error as { name?: unknown } | undefined;
  return e?.name === 'NamespaceNotFoundError' || /namespace .*not found/i.test(oneLine(error));
}

/**
 * Replay runs a worker: Temporal's own lines at ERROR, one line each, unless
 * `DURABLE_AGENT_LOG_LEVEL` asks for more.
 * @throws {ConfigError} when `DURABLE_AGENT_LOG_LEVEL` is not a level.
 */
async function installReplayRuntime(): Promise<void> {
  // Loaded here, as the worker is: its native runtime costs startup time other commands need not pay.
  const { installQuietRuntime } = await import('../worker/worker.js');
  installQuietRuntime(resolveLogLevel(undefined, process.env, 'ERROR'));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
