/**
 * Session histories as files: fetch a session's history from Temporal, write it as JSON,
 * read it back in the form the replay and the hook-term messages need. A file is Temporal's
 * own history JSON (what `temporal workflow show --output json` and the Web UI's download
 * write), so files from either side work.
 *
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Client, Connection, type WorkflowExecutionDescription } from '@temporalio/client';
import {
  historyFromJSON,
  historyToJSON,
  type History,
} from '@temporalio/common/lib/proto-utils.js';
import { normalizeHistory, sessionIdOfHistory } from './decode.js';
import { ConfigError, SessionNotFoundError, messageOf } from '../common/errors.js';
import { collapseWhitespace } from '../common/text.js';
import { sessionIdCandidates, sessionWorkflowId } from '../common/workflow-io.js';

/**
 * A history to replay, with the session it belongs to (what `fetchSessionHistory` and
 * `readHistoryFile` return).
 */
export interface SessionHistory {
  /** The session's id. */
  sessionId: string;
  /** The session's workflow id, `session-<sessionId>`. */
  workflowId: string;
  /**
   * One run's history: as `handle.fetchHistory()` or `readHistoryFile` give it (a history
   * parsed by `JSON.parse` alone is converted first).
   */
  history: History;
}

/**
 * Where to fetch a history from: a Temporal `Client`, an `AgentClient` (its `temporal`
 * client is used), or the `host:port` of a Temporal frontend (connected to for the call and
 * closed after it).
 */
export type HistorySource = Client | { readonly temporal: Client } | string;

/** Options of {@link fetchSessionHistory} and {@link fetchSessionHistories}. */
export interface FetchSessionHistoryOptions {
  /** Namespace, when `source` is an address. @default `'default'` */
  namespace?: string;
  /** A run of the session (one per continue-as-new). @default its newest run */
  runId?: string;
}

/**
 * Fetch the history of a session's newest run (or of `options.runId`), ready for
 * {@link replaySessionHistories} and {@link writeHistoryFile}.
 *
 * @param sessionId the session's id, or its workflow id `session-<id>` (what the Web UI
 *   shows): an id starting with `session-` is looked up as a workflow id first.
 * @returns the history with the session's id (from its start event) and workflow id.
 * @throws {SessionNotFoundError} when no session has this id.
 * @throws what `@temporalio/client` throws when the server cannot be reached.
 */
export async function fetchSessionHistory(
  source: HistorySource,
  sessionId: string,
  options: FetchSessionHistoryOptions = {},
): Promise<SessionHistory> {
  return withTemporalClient(source, options.namespace, async (client) => {
    const found = await findSessionWorkflow(client, sessionId);
    const history = await client.workflow.getHandle(found.workflowId, options.runId).fetchHistory();
    return {
      sessionId: sessionIdOfHistory(history) ?? found.sessionId,
      workflowId: found.workflowId,
      history,
    };
  });
}

/**
 * Fetch the histories of every run of a session, oldest first (one per continue-as-new,
 * found by following each run's `continuedExecutionRunId` back from the newest or from
 * `options.runId`).
 *
 * @throws what {@link fetchSessionHistory} throws.
 */
export async function fetchSessionHistories(
  source: HistorySource,
  sessionId: string,
  options: FetchSessionHistoryOptions = {},
): Promise<SessionHistory[]> {
  return withTemporalClient(source, options.namespace, async (client) => {
    const found = await findSessionWorkflow(client, sessionId);
    const runs = await fetchRunHistories(client, found.workflowId, options.runId);
    return runs.map((history) => ({
      sessionId: sessionIdOfHistory(history) ?? found.sessionId,
      workflowId: found.workflowId,
      history,
    }));
  });
}

/**
 * The histories of every run of a workflow, oldest first: from `runId` (the newest run when
 * absent) back along each run's `continuedExecutionRunId`.
 * @throws what `fetchHistory()` throws.
 * @internal shared with the test env.
 */
export async function fetchRunHistories(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<History[]> {
  const fetch = (id: string | undefined) =>
    client.workflow.getHandle(workflowId, id).fetchHistory();
  const runs: History[] = [await fetch(runId)];
  for (;;) {
    const started = runs[0]!.events?.[0]?.workflowExecutionStartedEventAttributes;
    const previous = started?.continuedExecutionRunId;
    if (!previous) return runs;
    runs.unshift(await fetch(previous));
  }
}

/**
 * Write a history as Temporal's history JSON (the format `temporal workflow show --output
 * json` writes), creating the file's folder when missing.
 *
 * @param history a `History` (from `handle.fetchHistory()`) or a {@link SessionHistory}.
 * @throws what `node:fs` throws when the file cannot be written.
 */
export function writeHistoryFile(path: string, history: History | SessionHistory): void {
  const events = 'history' in history ? history.history : history;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${historyToJSON(normalizeHistory(events))}\n`);
}

/**
 * Read a history file (from {@link writeHistoryFile}, `temporal workflow show --output
 * json` or the Web UI's download) for {@link replaySessionHistories}: its events parsed as
 * Temporal's proto objects (payloads as bytes, so replay failures are told in hook terms),
 * with the session's id read from its start event.
 *
 * @param options.sessionId the session's id, when the start event does not carry one.
 * @throws {ConfigError} naming the file and what is wrong: missing or unreadable, not JSON,
 *   not a Temporal history (its first event is not `WorkflowExecutionStarted`), or not a
 *   session's (no session id in its start event and none given).
 */
export function readHistoryFile(
  path: string,
  options: { sessionId?: string } = {},
): SessionHistory {
  const history = parseHistoryFile(path);
  const sessionId = sessionIdOfHistory(history) ?? options.sessionId;
  if (sessionId === undefined) {
    throw new ConfigError(
      `History file ${path} is not a session's: its start event names no sessionId ` +
        '(pass options.sessionId)',
    );
  }
  return { sessionId, workflowId: sessionWorkflowId(sessionId), history };
}

/**
 * Parse a history file into Temporal's proto `History`.
 * @throws {ConfigError} as {@link readHistoryFile} does (a history of any workflow passes).
 * @internal shared with the CLI.
 */
export function parseHistoryFile(path: string): History {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `History file ${path} does not exist`
        : `History file ${path} cannot be read: ${messageOf(error)}`,
      { cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `History file ${path} is not JSON: ${collapseWhitespace(messageOf(error))}`,
      {
        cause: error,
      },
    );
  }
  let history: History;
  try {
    history = historyFromJSON(json);
  } catch (error) {
    throw new ConfigError(
      `History file ${path} is not a Temporal history: ${collapseWhitespace(messageOf(error))}`,
      { cause: error },
    );
  }
  if (!history.events?.[0]?.workflowExecutionStartedEventAttributes) {
    throw new ConfigError(
      `History file ${path} is not a Temporal history: its first event is not WorkflowExecutionStarted`,
    );
  }
  return history;
}

/** A session's workflow, found by id or by workflow id. @internal shared with the CLI. */
export interface FoundSession {
  sessionId: string;
  workflowId: string;
  description: WorkflowExecutionDescription;
}

/**
 * Find a session's workflow by its id or its workflow id (`session-<id>`: as a workflow id
 * first, then as the id of a session whose own id starts with `session-`).
 * @throws {SessionNotFoundError} when neither exists.
 * @throws what `describe()` throws for anything but not-found.
 * @internal shared with the CLI.
 */
export async function findSessionWorkflow(
  client: Client,
  idOrWorkflowId: string,
): Promise<FoundSession> {
  for (const candidate of sessionIdCandidates(idOrWorkflowId)) {
    const workflowId = sessionWorkflowId(candidate);
    let description: WorkflowExecutionDescription;
    try {
      description = await client.workflow.getHandle(workflowId).describe();
    } catch (error) {
      if (isWorkflowNotFound(error)) continue;
      throw error;
    }
    const memo = description.memo?.sessionId;
    const sessionId = typeof memo === 'string' && memo !== '' ? memo : candidate;
    return { sessionId, workflowId, description };
  }
  throw new SessionNotFoundError(idOrWorkflowId);
}

/** Whether `error` is Temporal's not-found for a workflow (not for a namespace). */
function isWorkflowNotFound(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | undefined;
  if (e?.name === 'NamespaceNotFoundError' || /namespace .*not found/i.test(messageOf(error))) {
    return false;
  }
  return e?.name === 'WorkflowNotFoundError' || e?.code === 5 || e?.cause?.code === 5;
}

async function withTemporalClient<T>(
  source: HistorySource,
  namespace: string | undefined,
  body: (client: Client) => Promise<T>,
): Promise<T> {
  if (typeof source !== 'string') {
    return body('temporal' in source ? source.temporal : source);
  }
  if (source === '') throw new ConfigError('fetchSessionHistory: the address must not be empty');
  const connection = await Connection.connect({ address: source });
  try {
    return await body(new Client({ connection, namespace: namespace ?? 'default' }));
  } finally {
    await connection.close();
  }
}
