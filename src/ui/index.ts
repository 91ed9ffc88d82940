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
 * @module durable-agent-sdk/ui
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { hostname, userInfo } from 'node:os';
import { Client } from '@temporalio/client';
import { ConfigError, messageOf } from '../common/errors.js';
import { closeServer, listen } from '../server/http.js';
import type { UiContext } from './context.js';
import { HttpError, send } from './http.js';
import { messagePage } from './pages.js';
import { handle } from './routes.js';

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
  const expected = digest(token);
  const ui: UiContext = {
    client,
    namespace: client.options.namespace,
    codecs: client.options.loadedDataConverter.payloadCodecs,
    limit,
    timeoutMs,
    identity,
    taskQueue: options.taskQueue,
    token,
    tokenMatches: (given) => timingSafeEqual(digest(given), expected),
    cookieName: 'durable_agent_ui',
    answering: new Map(),
  };

  const server = createServer((request, response) => {
    handle(ui, request, response).catch((error: unknown) => {
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

  const { port, url } = await listen(server, host, options.port);
  // Cookies are per host, not per port: two pages on one host keep a cookie each.
  ui.cookieName = `durable_agent_ui_${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    loginUrl: `${url}/?token=${encodeURIComponent(token)}`,
    port,
    token,
    close: () => (closing ??= closeServer(server)),
  };
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

function processUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'unknown';
  }
}
