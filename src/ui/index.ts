/**
 * The session page: a small web app over a Temporal client that lists an agent's sessions by
 * status, shows one session as turns → hook dispatches → each callback's decision → tools
 * (with the diffs of modified inputs and outputs), and keeps an inbox of the permission
 * requests waiting for a person, who approves (optionally with an edited input) or denies
 * with a message. Everything shown comes from the sessions' histories, read as `durable-agent
 * inspect` reads them (the same timeline), so it works without a worker; the inbox's request
 * ids and the answers need the session's worker (a query, the `decidePermission` Update:
 * the very calls of `durable-agent approve`/`deny` and `session.approve()`/`deny()`).
 *
 *     import { createSessionUi } from 'durable-agent-sdk/ui';
 *     const ui = await createSessionUi({ client, port: 8234 });
 *     console.log(ui.loginUrl); // http://127.0.0.1:8234/?token=...
 *
 * Access: every page needs the token: `?token=<token>` once (the answer keeps it in an
 * HttpOnly, SameSite=Strict cookie and drops it from the address), the cookie, or
 * `Authorization: Bearer <token>`; without it, or with another, the answer is 401. A form
 * posted from another origin is refused (403). The static assets need no token.
 *
 * `durable-agent ui` runs one from the CLI's connection settings (src/cli/README.md).
 *
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { hostname, userInfo } from 'node:os';
import { Client } from '@temporalio/client';
import {
  AgentSdkError,
  ConfigError,
  SessionClosedError,
  SessionNotFoundError,
  messageOf,
} from '../common/errors.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import { Queries } from '../common/protocol.js';
import { toolLabel } from '../common/summaries.js';
import { listSessionSummaries } from '../client/list-sessions.js';
import { sessionListStatus } from '../client/session-status.js';
import { isNoPollerError } from '../temporal/query.js';
import { Session } from '../client/session.js';
import { decodeHistoryPayloads, storedPayloadEventIds } from '../history/decode.js';
import { describeDecidedRequest } from '../history/decided.js';
import { diffValues } from '../history/diff.js';
import { findSessionWorkflow, type FoundSession } from '../history/files.js';
import { timelineFromHistory, type HistoryTimeline } from '../history/timeline.js';
import { closeServer, listen } from '../server/http.js';
import { UI_CSS, UI_JS } from './assets.js';
import { requestContext } from './request-context.js';
import {
  inboxPage,
  messagePage,
  sessionLink,
  sessionListPage,
  sessionPage,
  sessionPath,
  type InboxEntry,
  type SessionRow,
  type SessionUiStatus,
} from './pages.js';

export type { SessionUiStatus } from './pages.js';

/** Options of {@link createSessionUi}. */
export interface SessionUiOptions {
  /**
   * The Temporal client the app reads and answers through. Its data converter's codecs open
   * the sessions' payloads (an encrypted agent's key ring, its payload store), as the CLI's
   * client does with `DURABLE_AGENT_ENCRYPTION_KEYS`; its namespace is the one listed.
   */
  client: Client;
  /**
   * The token every page needs, at least 16 characters. @default a random one (24 bytes,
   * base64url): read it from `token` of the result
   */
  token?: string;
  /** TCP port. @default 0 (a free port: read it from `port` of the result) */
  port?: number;
  /** Address to listen on. @default `127.0.0.1` (loopback only) */
  host?: string;
  /**
   * Who answers, recorded with each approval or denial in the session's history (what
   * `inspect` and the page show as who decided) when the person gave no name on the page;
   * with a name `N`, `ui:N`. @default `ui:<user>@<host>` of this process
   */
  identity?: string;
  /** Most sessions listed (newest first). @default 50 */
  limit?: number;
  /**
   * List only the sessions started on this task queue (one agent's `temporal.taskQueue`).
   * @default every session of the namespace
   */
  taskQueue?: string;
  /**
   * How long one page waits on the server and on a session's worker (a query, an answer),
   * ms. @default 10000
   */
  timeoutMs?: number;
}

/** A running session page. */
export interface SessionUi {
  /** `http://<host>:<port>`. */
  readonly url: string;
  /** `url` with `?token=`: the address to open once. */
  readonly loginUrl: string;
  /** The port it listens on. */
  readonly port: number;
  /** The token (the one given, or the one generated). */
  readonly token: string;
  /** Stop listening and close open connections. Idempotent. */
  close(): Promise<void>;
}

const MIN_TOKEN_CHARS = 16;
const DEFAULT_LIMIT = 50;
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_NAME_CHARS = 100;
/** Histories read at once for the list. */
const READ_CONCURRENCY = 4;

/** An answer other than the page asked for (a 401, a 404 page, ...). */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly links = '<a href="/">Sessions</a> · <a href="/inbox">Inbox</a>',
  ) {
    super(message);
  }
}

/**
 * Start the session page.
 *
 * @returns once it listens.
 * @throws {ConfigError} when `token` is shorter than 16 characters, `limit` or `timeoutMs`
 *   is not a positive integer, or `identity` is empty.
 * @throws what `node:http` throws when it cannot listen (a port in use: `EADDRINUSE`).
 */
export async function createSessionUi(options: SessionUiOptions): Promise<SessionUi> {
  const { client } = options;
  if (!(client instanceof Client)) {
    throw new ConfigError('createSessionUi needs client: a Temporal Client (@temporalio/client)');
  }
  const token = options.token ?? randomBytes(24).toString('base64url');
  if (typeof token !== 'string' || token.length < MIN_TOKEN_CHARS) {
    throw new ConfigError(
      `createSessionUi: token must have at least ${MIN_TOKEN_CHARS} characters (whoever holds it ` +
        'reads every session and answers its permission requests)',
    );
  }
  const limit = positiveInteger(options.limit ?? DEFAULT_LIMIT, 'limit');
  const timeoutMs = positiveInteger(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
  const identity = options.identity ?? `ui:${processUser()}@${hostname()}`;
  if (identity.trim() === '') throw new ConfigError('createSessionUi: identity must not be empty');
  const host = options.host ?? '127.0.0.1';
  const namespace = client.options.namespace;
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  const expected = digest(token);
  const tokenMatches = (given: string) => timingSafeEqual(digest(given), expected);
  /** Clients that answer as a given identity (the Update records the client's). */
  const answering = new Map<string, Client>();
  let cookieName = 'durable_agent_ui';

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const failure =
        error instanceof HttpError
          ? error
          : new HttpError(500, 'Something went wrong', messageOf(error));
      if (response.headersSent) {
        response.destroy();
        return;
      }
      send(
        response,
        failure.status,
        messagePage(failure.title, failure.message, failure.links),
        failure.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="durable-agent ui"' } : {},
      );
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://ui.invalid');
    const method = request.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/assets/ui.css') {
      return send(response, 200, UI_CSS, { 'Content-Type': 'text/css; charset=utf-8' });
    }
    if (method === 'GET' && url.pathname === '/assets/ui.js') {
      return send(response, 200, UI_JS, { 'Content-Type': 'text/javascript; charset=utf-8' });
    }
    const fromQuery = url.searchParams.get('token');
    if (fromQuery !== null) {
      if (!tokenMatches(fromQuery))
        throw unauthorized('the token in the address is not this page’s');
      // Kept in a cookie; the address loses it (history, screenshots, Referer).
      url.searchParams.delete('token');
      response.setHeader(
        'Set-Cookie',
        `${cookieName}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
      );
      return redirect(response, `${url.pathname}${url.search}`);
    }
    if (!authorized(request)) {
      throw unauthorized(
        'a valid token is required: open the address `durable-agent ui` printed (with ?token=), ' +
          'or send Authorization: Bearer <token>',
      );
    }
    if (method === 'POST') {
      const origin = request.headers.origin;
      if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) {
        throw new HttpError(403, 'Refused', `a form from another origin (${origin}) is refused`);
      }
    }
    const parts = url.pathname.split('/').filter((p) => p !== '');
    if (parts.length === 0) return get(method, () => listPage(response));
    if (parts[0] === 'inbox' && parts.length === 1) return get(method, () => inbox(response));
    if (parts[0] === 'sessions' && parts.length === 2) {
      return get(method, () => session(response, decodePart(parts[1]!), url.searchParams));
    }
    if (
      parts[0] === 'sessions' &&
      parts[2] === 'requests' &&
      parts.length === 5 &&
      (parts[4] === 'approve' || parts[4] === 'deny')
    ) {
      if (method !== 'POST')
        throw new HttpError(405, 'Method not allowed', `${method} not allowed: POST`);
      return answer(request, response, {
        session: decodePart(parts[1]!),
        requestId: decodePart(parts[3]!),
        verb: parts[4],
      });
    }
    throw new HttpError(404, 'Not found', `no page at ${url.pathname}`);
  }

  function get(method: string, body: () => Promise<void>): Promise<void> {
    if (method !== 'GET' && method !== 'HEAD') {
      throw new HttpError(405, 'Method not allowed', `${method} not allowed: GET`);
    }
    return body();
  }

  function authorized(request: IncomingMessage): boolean {
    const bearer = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (bearer) return tokenMatches(bearer[1]!);
    for (const part of (request.headers.cookie ?? '').split(';')) {
      const at = part.indexOf('=');
      if (at < 0 || part.slice(0, at).trim() !== cookieName) continue;
      try {
        return tokenMatches(decodeURIComponent(part.slice(at + 1).trim()));
      } catch {
        return false;
      }
    }
    return false;
  }

  /** Run `body` with every server call bounded by `timeoutMs`. */
  function bounded<T>(body: () => Promise<T>): Promise<T> {
    return client.connection.withDeadline(Date.now() + timeoutMs, body);
  }

  async function readTimeline(workflowId: string, sessionId: string): Promise<HistoryTimeline> {
    const recorded = await bounded(() => client.workflow.getHandle(workflowId).fetchHistory());
    let history;
    try {
      history = await decodeHistoryPayloads(recorded, codecs);
    } catch (error) {
      if (error instanceof AgentSdkError) throw unreadable(sessionId, error);
      throw error;
    }
    return timelineFromHistory(history, { storedPayloadEventIds: storedPayloadEventIds(recorded) });
  }

  /**
   * The requests of a session waiting for a person, as its worker lists them.
   * @throws {HttpError} 503 when no worker answers.
   */
  async function pendingOf(found: { sessionId: string; workflowId: string }, answering = false) {
    try {
      return await bounded(() =>
        client.workflow.getHandle(found.workflowId).query(Queries.pendingPermissions),
      );
    } catch (error) {
      const why = isNoPollerError(error)
        ? "no worker polls the session's task queue"
        : isCallTimeout(error)
          ? `no worker answered within ${Math.round(timeoutMs / 1000)} s`
          : messageOf(error);
      throw new HttpError(
        503,
        'No worker answers',
        `session '${found.sessionId}': ${why}; its requests are read and answered through the ` +
          `agent's worker: start it and try again${answering ? ' (nothing was sent)' : ''}`,
        `${sessionLink(found.sessionId, 'back to the session')} · <a href="/inbox">Inbox</a>`,
      );
    }
  }

  /** The inbox entries of one session: its worker's list, else the history's waiting calls. */
  async function entriesOf(
    row: { sessionId: string; workflowId: string },
    timeline: HistoryTimeline,
  ): Promise<InboxEntry[]> {
    try {
      const pending = await pendingOf(row);
      return pending.map((request) => ({
        sessionId: row.sessionId,
        request,
        ...requestContext(timeline, request.toolUseId, request.input),
      }));
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return timeline.toolCalls
        .filter((c) => c.permission?.ask?.outcome === 'waiting')
        .map((call) => ({
          sessionId: row.sessionId,
          call,
          unavailable: error.message,
          ...requestContext(timeline, call.toolUseId, undefined),
        }));
    }
  }

  async function rows(): Promise<Array<SessionRow & { timeline?: HistoryTimeline }>> {
    const summaries = await bounded(() =>
      listSessionSummaries(client, limit, {
        ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
      }),
    );
    return mapLimited(summaries, READ_CONCURRENCY, async (s) => {
      const row: SessionRow & { timeline?: HistoryTimeline } = {
        sessionId: s.sessionId,
        workflowId: s.workflowId,
        status: endStatusOf(s.status) ?? 'closed',
        temporalStatus: s.status,
        startTime: s.startTime,
        ...(s.closeTime ? { closeTime: s.closeTime } : {}),
        ...(s.agentName !== undefined ? { agentName: s.agentName } : {}),
      };
      if (s.status !== 'RUNNING') return row;
      try {
        const timeline = await readTimeline(s.workflowId, s.sessionId);
        row.timeline = timeline;
        row.status = statusOf(timeline);
        row.prompts = timeline.prompts.length;
        if (timeline.agentName) row.agentName = timeline.agentName;
        const waiting = timeline.toolCalls.filter((c) => c.permission?.ask?.outcome === 'waiting');
        if (waiting.length) row.waiting = waiting.map((c) => toolLabel(c.toolName, c.input));
      } catch (error) {
        row.status = 'running';
        row.error = error instanceof HttpError ? error.message : messageOf(error);
      }
      return row;
    });
  }

  async function listPage(response: ServerResponse): Promise<void> {
    send(response, 200, sessionListPage(await rows(), namespace));
  }

  async function inbox(response: ServerResponse): Promise<void> {
    const waiting = (await rows()).filter((r) => r.status === 'awaiting_approval' && r.timeline);
    const entries = await mapLimited(waiting, READ_CONCURRENCY, (r) => entriesOf(r, r.timeline!));
    send(response, 200, inboxPage(entries.flat(), { fallback: identity }));
  }

  async function find(target: string): Promise<FoundSession> {
    try {
      return await bounded(() => findSessionWorkflow(client, target));
    } catch (error) {
      if (error instanceof SessionNotFoundError) {
        throw new HttpError(
          404,
          'No such session',
          `no session '${target}' in namespace '${namespace}'`,
        );
      }
      // Its memo did not open (an encrypted session, a key the ring lacks).
      if (error instanceof AgentSdkError) throw unreadable(target, error);
      throw error;
    }
  }

  async function session(
    response: ServerResponse,
    target: string,
    query: URLSearchParams,
  ): Promise<void> {
    const found = await find(target);
    const timeline = await readTimeline(found.workflowId, found.sessionId);
    const status = statusOf(timeline);
    const pending =
      status === 'awaiting_approval' ? await entriesOf(found, timeline) : ([] as InboxEntry[]);
    const notice = noticeOf(query);
    send(
      response,
      200,
      sessionPage({
        timeline,
        status,
        pending,
        who: { fallback: identity },
        ...(notice ? { notice } : {}),
      }),
    );
  }

  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    target: { session: string; requestId: string; verb: 'approve' | 'deny' },
  ): Promise<void> {
    const form = new URLSearchParams(await readBody(request));
    const found = await find(target.session);
    const back = `${sessionLink(found.sessionId, 'back to the session')} · <a href="/inbox">Inbox</a>`;
    if (found.description.status.name !== 'RUNNING') {
      throw new HttpError(
        409,
        'Session closed',
        `session '${found.sessionId}' is closed (${found.description.status.name}): nothing was sent`,
        back,
      );
    }
    const edited =
      target.verb === 'approve' ? parseEditedInput(form.get('input'), back) : undefined;
    const name = nameOf(form.get('name'), back);
    const pending = await pendingOf(found, true);
    const waiting = pending.find((r) => r.requestId === target.requestId);
    const alreadyDecided = async (): Promise<never> => {
      const timeline = await readTimeline(found.workflowId, found.sessionId);
      const toolUseId = form.get('toolUseId');
      throw new HttpError(
        409,
        'Not pending',
        describeDecidedRequest(timeline, {
          requestId: target.requestId,
          ...(toolUseId ? { toolUseId } : {}),
        }),
        back,
      );
    };
    if (!waiting) return alreadyDecided();
    const who = name !== undefined ? `ui:${name}` : identity;
    const handle = clientAs(who).workflow.getHandle(found.workflowId);
    const answering = new Session(found.sessionId, handle);
    try {
      await bounded(() =>
        target.verb === 'approve'
          ? answering.approve(
              target.requestId,
              edited !== undefined && diffValues(waiting.input, edited) !== undefined
                ? { updatedInput: edited }
                : {},
            )
          : answering.deny(target.requestId, {
              ...(form.get('message') ? { message: form.get('message')! } : {}),
              ...(form.get('interrupt') ? { interrupt: true } : {}),
            }),
      );
    } catch (error) {
      if (error instanceof AgentSdkError && error.code === 'PERMISSION_REQUEST_NOT_FOUND') {
        return alreadyDecided();
      }
      if (error instanceof SessionClosedError) {
        throw new HttpError(409, 'Session closed', messageOf(error), back);
      }
      if (isCallTimeout(error)) {
        throw new HttpError(
          504,
          'Not applied yet',
          `the answer to ${target.requestId} was sent to session '${found.sessionId}' but not ` +
            `applied within ${Math.round(timeoutMs / 1000)} s: it may still apply when a worker ` +
            'polls the session’s task queue; reload the session to see',
          back,
        );
      }
      throw error;
    }
    const done = target.verb === 'approve' ? 'approved' : 'denied';
    redirect(
      response,
      `${sessionPath(found.sessionId)}?notice=${done}&request=${encodeURIComponent(target.requestId)}&by=${encodeURIComponent(who)}`,
    );
  }

  function clientAs(who: string): Client {
    let answeringClient = answering.get(who);
    if (!answeringClient) {
      answeringClient = new Client({
        connection: client.connection,
        namespace,
        dataConverter: client.options.dataConverter,
        interceptors: client.options.interceptors,
        identity: who,
      });
      answering.set(who, answeringClient);
    }
    return answeringClient;
  }

  const { port, url } = await listen(server, host, options.port);
  // Cookies are per host, not per port: two pages on one host keep a cookie each.
  cookieName = `durable_agent_ui_${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    loginUrl: `${url}/?token=${encodeURIComponent(token)}`,
    port,
    token,
    close: () => (closing ??= closeServer(server)),
  };
}

/**
 * A session's status on the page: unless its workflow runs, `closed` (it completed) or how
 * Temporal ended it (`terminated`, ...); `awaiting_approval` while a tool call waits for a
 * person; `running` while a prompt or a dispatch is in progress; else `idle`.
 */
function statusOf(timeline: HistoryTimeline): SessionUiStatus {
  const ended = endStatusOf(timeline.status);
  if (ended !== undefined) return ended;
  if (timeline.toolCalls.some((c) => c.permission?.ask?.outcome === 'waiting')) {
    return 'awaiting_approval';
  }
  const busy =
    timeline.prompts.some((p) => p.status === undefined) ||
    timeline.dispatches.some((d) => d.decision === 'running');
  return busy ? 'running' : 'idle';
}

/**
 * `closed` for a completed execution, how Temporal ended any other closed one (`terminated`,
 * `timed_out`, ...), `undefined` for a running one. Never the session's own search
 * attribute: a terminated or reset workflow keeps its last `DurableAgentStatus`.
 */
function endStatusOf(executionStatus: string): SessionUiStatus | undefined {
  if (executionStatus === 'RUNNING') return undefined;
  const status = sessionListStatus(executionStatus, undefined);
  // UNSPECIFIED, which a listed execution never has: counted as closed, as before.
  return status === undefined ? 'closed' : (status as SessionUiStatus);
}

/** The line an answer's redirect asks the session page to show. */
function noticeOf(query: URLSearchParams): string | undefined {
  const done = query.get('notice');
  const requestId = query.get('request');
  if ((done !== 'approved' && done !== 'denied') || !requestId) return undefined;
  const by = query.get('by');
  return `${done === 'approved' ? 'Approved' : 'Denied'} request ${requestId}${by ? ` as ${by}` : ''}${
    done === 'approved' ? ': the tool runs once the session’s worker picks it up' : ''
  }`;
}

/**
 * The approval form's input: absent or blank means as asked.
 * @throws {HttpError} 400 naming what is wrong: not JSON (with the parser's message), or not
 *   an object.
 */
function parseEditedInput(text: string | null, links: string): JsonObject | undefined {
  if (text === null || text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(
      400,
      'Bad edited input',
      `the edited input is not valid JSON: ${messageOf(error)}; nothing was sent`,
      links,
    );
  }
  if (!isPlainObject(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw new HttpError(
      400,
      'Bad edited input',
      `the edited input must be a JSON object (the tool's input, e.g. {"file_path": "a.txt"}), ` +
        `got ${kind}; nothing was sent`,
      links,
    );
  }
  return value as JsonObject;
}

/** The name a person gave, for the identity: trimmed, at most 100 characters, no controls. */
function nameOf(text: string | null, links: string): string | undefined {
  const name = text?.trim() ?? '';
  if (name === '') return undefined;
  // eslint-disable-next-line no-control-regex
  if (name.length > MAX_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new HttpError(
      400,
      'Bad name',
      `your name must be at most ${MAX_NAME_CHARS} characters without control characters; nothing was sent`,
      links,
    );
  }
  return name;
}

/** A session whose payloads do not open (a key the ring lacks, a missing stored payload). */
function unreadable(sessionId: string, error: AgentSdkError): HttpError {
  return new HttpError(
    422,
    'Cannot read this session',
    `session '${sessionId}': cannot read its payloads: ${messageOf(error)} ` +
      '(the CLI reads them with DURABLE_AGENT_ENCRYPTION_KEYS and --payloads)',
  );
}

function unauthorized(message: string): HttpError {
  return new HttpError(401, 'Token required', message, '');
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, 'Bad address', `'${part}' is not a valid address part`);
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(
      `createSessionUi: ${name} must be a positive integer, got ${String(value)}`,
    );
  }
  return value;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Whether a call ended at its deadline (gRPC DEADLINE_EXCEEDED or CANCELLED). */
function isCallTimeout(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 8; depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (code === 4 || code === 1 || name === 'WorkflowUpdateRPCTimeoutOrCancelledError') {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

function processUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      throw new HttpError(413, 'Too large', `the form is over ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `items` mapped by `fn`, at most `limit` at a time, in order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return results;
}

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  // Not no-referrer: Chromium then posts forms with `Origin: null`, which the origin check refuses.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

function send(
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    ...SECURITY_HEADERS,
    ...headers,
  });
  response.end(body);
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { Location: location, ...SECURITY_HEADERS });
  response.end();
}
