/**
 * The worker's connections to its MCP servers: one official SDK `Client` a server, started
 * when first used and again after its process dies. The SDK is loaded with `import()` here
 * only, so agents without MCP servers need not install it.
 *
 * @module
 */
import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, McpServerError, messageOf } from '../common/errors.js';
import type { JsonObject } from '../common/json.js';
import type { McpServerConfig, McpServers } from './options.js';
import type { McpToolSpec } from '../common/mcp.js';
import { mcpToolSpec } from './tools.js';

/**
 * A `tools/call` answer as the server sent it (the SDK's `CallToolResult`, typed here so this
 * package's types do not need the SDK): `content` parts, `structuredContent`, `isError`.
 */
interface McpCallResult {
  content?: Array<{ type: string; [key: string]: unknown }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** What {@link McpConnections} needs besides the servers. */
interface McpConnectionsOptions {
  /**
   * The tool environment (`DEFAULT_TOOL_ENV` + `advanced.toolEnv`, see `toolEnvironment`):
   * a stdio server's environment is this plus its own `env`, never the worker's.
   */
  env: Readonly<Record<string, string>>;
  /** Our name in MCP's `initialize`. @default 'durable-agent-sdk' */
  clientName?: string;
  /** Our version in MCP's `initialize`. @default '0.0.0' */
  clientVersion?: string;
  /** Longest wait for a server to start and answer `initialize`, ms. @default 30000 */
  connectTimeoutMs?: number;
}

/** What {@link McpConnections.callTool} takes besides the call. */
interface McpCallOptions {
  /** Aborting it cancels the call: the server gets `notifications/cancelled`. */
  signal?: AbortSignal;
  /** Called on each progress notification of the server. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Longest wait for the answer, ms, restarted by each progress notification.
   * @default 60000 (the SDK's)
   */
  timeoutMs?: number;
}

/** Most bytes of a stdio server's stderr kept for error messages. */
const STDERR_TAIL_BYTES = 4096;
/** Most `tools/list` pages read from one server: a cursor that never ends is the server's bug. */
const MAX_LIST_PAGES = 100;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** The parts of the SDK used here, loaded on first connect. */
interface Sdk {
  Client: typeof ClientModule.Client;
  McpError: typeof TypesModule.McpError;
  ErrorCode: typeof TypesModule.ErrorCode;
  ToolListChangedNotificationSchema: typeof TypesModule.ToolListChangedNotificationSchema;
  stdio: () => Promise<typeof StdioModule>;
  http: () => Promise<typeof HttpModule>;
}

/** One live (or connecting) client of a server. */
interface Connection {
  readonly client: Client;
  readonly transport: Transport;
  /** The stdio server's process id, once started. */
  readonly pid: () => number | undefined;
  /** The end of the stdio server's stderr. */
  readonly stderr: { text: string };
  /**
   * Whether the server announces changes of its tool list (`tools.listChanged`): then its
   * list is kept in `tools` until it says it changed.
   */
  watchesTools?: boolean;
  /** The server's tools as last listed, while it has not said they changed. */
  tools?: McpToolSpec[];
}

/** A server's entry: the connect every first use shares, then the connection. */
interface Entry {
  readonly ready: Promise<Connection>;
  connection?: Connection;
}

/**
 * Clients of the configured MCP servers, one a server, each connected when first used
 * (concurrent first uses share one connect) and dropped when its transport closes (a stdio
 * server that exited) or a request fails below MCP (a refused connection, an HTTP session the
 * server forgot): the next use connects again, starting a new process.
 *
 * Errors: a server that cannot be started or reached, or dies mid-call, or is not configured,
 * throws {@link McpServerError}. An MCP error answer (unknown tool, bad arguments, the SDK's
 * request timeout) is thrown as the SDK's `McpError`; an aborted call throws the signal's reason.
 *
 * @example
 * const mcp = new McpConnections({ fs: { command: 'mcp-fs', args: ['/srv'] } }, { env });
 * const { tools } = await mcp.listAll();
 * const result = await mcp.callTool('fs', 'read_file', { path: '/srv/a.txt' }, { signal });
 * await mcp.close();
 */
export class McpConnections {
  readonly #servers: McpServers;
  readonly #options: McpConnectionsOptions;
  readonly #entries = new Map<string, Entry>();
  #closing: Promise<void> | undefined;
  #sdk: Promise<Sdk> | undefined;

  /**
   * @param servers The servers, by name; none is started here.
   * @param options The tool environment and client settings.
   * @throws ConfigError when a server's name is empty or contains `__` (it could not be
   *   told apart in `mcp__<server>__<tool>`).
   */
  constructor(servers: McpServers, options: McpConnectionsOptions) {
    for (const name of Object.keys(servers)) {
      if (name === '' || name.includes('__')) {
        throw new ConfigError(`MCP server name '${name}' must be non-empty and contain no '__'`);
      }
    }
    this.#servers = servers;
    this.#options = options;
  }

  /** The configured servers' names. */
  get servers(): string[] {
    return Object.keys(this.#servers);
  }

  /** The process id of `server`'s live stdio process; `undefined` when not connected. */
  pid(server: string): number | undefined {
    return this.#entries.get(server)?.connection?.pid();
  }

  /**
   * The tools `server` offers, every page of `tools/list` read. A server that announces
   * changes of its list (`tools.listChanged`) is listed once per connection and again after
   * its `notifications/tools/list_changed`; any other, at every call.
   *
   * @throws McpServerError when the server is not configured, cannot be reached, or fails.
   */
  async listTools(server: string): Promise<McpToolSpec[]> {
    return this.#request(server, undefined, async (client, connection) => {
      // A server that announces changes is listed again only after it said so.
      if (connection.tools) return connection.tools;
      const specs: McpToolSpec[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.#connectTimeoutMs,
        });
        for (const tool of listed.tools) specs.push(mcpToolSpec(server, tool));
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
      }
      if (connection.watchesTools) connection.tools = specs;
      return specs;
    });
  }

  /**
   * The tools of every configured server, listed in parallel. A server that fails is named in
   * `unavailable` (with why) and the others' tools are still listed. Never throws.
   */
  async listAll(): Promise<{
    tools: McpToolSpec[];
    unavailable: { server: string; message: string }[];
  }> {
    const names = this.servers;
    const lists = await Promise.allSettled(names.map((name) => this.listTools(name)));
    const tools: McpToolSpec[] = [];
    const unavailable: { server: string; message: string }[] = [];
    lists.forEach((list, i) => {
      if (list.status === 'fulfilled') tools.push(...list.value);
      else unavailable.push({ server: names[i] ?? '', message: messageOf(list.reason) });
    });
    return { tools, unavailable };
  }

  /**
   * Call `tool` of `server` with `args`, and return the server's `CallToolResult` as is (map
   * it with `mcpResultToToolResult`). Progress is asked for (`onProgress`), and each
   * notification restarts the timeout.
   *
   * @throws McpServerError when the server is not configured, cannot be reached, or dies.
   * @throws The signal's reason when `options.signal` aborts; the server is told
   *   (`notifications/cancelled`).
   * @throws McpError (the SDK's) when the server answers with an error.
   */
  async callTool(
    server: string,
    tool: string,
    args: JsonObject,
    options: McpCallOptions = {},
  ): Promise<McpCallResult> {
    const { signal, onProgress, timeoutMs } = options;
    return this.#request(server, signal, async (client) => {
      // The default result schema is CallToolResultSchema: the union's other arm (a
      // pre-2024-11 `{ toolResult }`) only comes back with the compatibility schema.
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        ...(signal !== undefined ? { signal } : {}),
        ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
        onprogress: (p) => {
          onProgress?.({
            progress: p.progress,
            ...(p.total !== undefined ? { total: p.total } : {}),
            ...(p.message !== undefined ? { message: p.message } : {}),
          });
        },
        resetTimeoutOnProgress: true,
      });
      return result as McpCallResult;
    });
  }

  /**
   * Close every connection: stdio servers get their stdin closed, then SIGTERM, then SIGKILL
   * (2 s apart, the SDK's steps). Later calls throw `McpServerError`. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const entries = [...this.#entries.values()];
      this.#entries.clear();
      await Promise.all(
        entries.map(async (entry) => {
          const connection = await entry.ready.catch(() => undefined);
          await connection?.client.close().catch(() => undefined);
        }),
      );
    })();
    return this.#closing;
  }

  get #connectTimeoutMs(): number {
    return this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  }

  /** Run `request` on `server`'s client, turning failures below MCP into McpServerError. */
  async #request<T>(
    server: string,
    signal: AbortSignal | undefined,
    request: (client: Client, connection: Connection) => Promise<T>,
  ): Promise<T> {
    const entry = this.#entry(server);
    const connection = await untilAborted(entry.ready, signal);
    try {
      return await request(connection.client, connection);
    } catch (error) {
      signal?.throwIfAborted();
      const sdk = await this.#loadSdk(server);
      // ConnectionClosed: the transport went away under the request.
      if (error instanceof sdk.McpError && error.code !== sdk.ErrorCode.ConnectionClosed) {
        throw error;
      }
      this.#drop(server, entry);
      throw new McpServerError(
        server,
        `MCP server '${server}' failed: ${messageOf(error)}${stderrSuffix(connection)}`,
        { cause: error },
      );
    }
  }

  /** `server`'s entry, connecting when there is none. */
  #entry(server: string): Entry {
    if (this.#closing !== undefined) {
      throw new McpServerError(server, `MCP server '${server}': the connections are closed`);
    }
    const config = Object.hasOwn(this.#servers, server) ? this.#servers[server] : undefined;
    if (config === undefined) {
      const known = this.servers.map((name) => `'${name}'`).join(', ') || 'none';
      throw new McpServerError(
        server,
        `MCP server '${server}' is not configured (configured: ${known})`,
      );
    }
    const existing = this.#entries.get(server);
    if (existing !== undefined) return existing;
    const entry: Entry = { ready: this.#connect(server, config, () => entry) };
    this.#entries.set(server, entry);
    entry.ready.then(
      (connection) => {
        entry.connection = connection;
      },
      () => this.#drop(server, entry),
    );
    return entry;
  }

  /** Forget `entry` (if it is still `server`'s) and close its client. */
  #drop(server: string, entry: Entry): void {
    if (this.#entries.get(server) !== entry) return;
    this.#entries.delete(server);
    void entry.ready.then(
      (connection) => connection.client.close().catch(() => undefined),
      () => undefined,
    );
  }

  async #connect(server: string, config: McpServerConfig, self: () => Entry): Promise<Connection> {
    const sdk = await this.#loadSdk(server);
    const client = new sdk.Client(
      {
        name: this.#options.clientName ?? 'durable-agent-sdk',
        version: this.#options.clientVersion ?? '0.0.0',
      },
      { capabilities: {} },
    );
    const failed = (error: unknown, stderr = ''): McpServerError =>
      new McpServerError(
        server,
        `MCP server '${server}' could not be ${config.type === 'http' ? 'reached' : 'started'}: ` +
          `${messageOf(error)}${stderr}`,
        { cause: error },
      );
    const connection = await this.#transport(config, sdk).then(
      (parts): Connection => ({ client, ...parts }),
      (error: unknown) => {
        throw failed(error);
      },
    );
    client.onclose = () => this.#drop(server, self());
    try {
      await client.connect(connection.transport, { timeout: this.#connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw failed(error, stderrSuffix(connection));
    }
    if (client.getServerCapabilities()?.tools?.listChanged === true) {
      connection.watchesTools = true;
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
        delete connection.tools;
      });
    }
    return connection;
  }

  /** The transport of `config`, and how to read its process id and stderr. */
  async #transport(config: McpServerConfig, sdk: Sdk): Promise<Omit<Connection, 'client'>> {
    const stderr = { text: '' };
    if (config.type === 'http') {
      const { StreamableHTTPClientTransport } = await sdk.http();
      const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
      });
      return { transport, pid: () => undefined, stderr };
    }
    const { StdioClientTransport, DEFAULT_INHERITED_ENV_VARS } = await sdk.stdio();
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: stdioEnvironment(this.#options.env, config.env, DEFAULT_INHERITED_ENV_VARS),
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      stderr.text = (stderr.text + chunk.toString()).slice(-STDERR_TAIL_BYTES);
    });
    return { transport, pid: () => transport.pid ?? undefined, stderr };
  }

  #loadSdk(server: string): Promise<Sdk> {
    this.#sdk ??= loadSdk();
    return this.#sdk.catch((error: unknown) => {
      this.#sdk = undefined;
      throw new McpServerError(
        server,
        `MCP server '${server}' could not be started: the package @modelcontextprotocol/sdk ` +
          `is not installed (npm install @modelcontextprotocol/sdk): ${messageOf(error)}`,
        { cause: error },
      );
    });
  }
}

/**
 * Check that the MCP SDK can be loaded, so a worker with `mcpServers` fails at its start
 * rather than recording every server as unavailable in each session.
 * @param load How the SDK is loaded. @default `import()` of `@modelcontextprotocol/sdk`
 * @throws {ConfigError} naming the package to install.
 */
export async function checkMcpSdk(load: () => Promise<unknown> = loadSdk): Promise<void> {
  try {
    await load();
  } catch (error) {
    throw new ConfigError(
      `mcpServers needs the package @modelcontextprotocol/sdk (an optional peer dependency of ` +
        `durable-agent-sdk): npm install @modelcontextprotocol/sdk (${messageOf(error)})`,
      { cause: error },
    );
  }
}

async function loadSdk(): Promise<Sdk> {
  const [client, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    stdio: () => import('@modelcontextprotocol/sdk/client/stdio.js'),
    http: () => import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  };
}

/**
 * A stdio server's environment: the tool environment, then the server's own `env`. The SDK
 * spreads `getDefaultEnvironment()` (HOME, LOGNAME, PATH, SHELL, TERM, USER of the worker)
 * under what it is given; a name of those we do not set is given as `undefined`, which
 * `child_process.spawn` leaves out, so nothing of the worker's environment gets through.
 */
export function stdioEnvironment(
  toolEnv: Readonly<Record<string, string>>,
  serverEnv: Readonly<Record<string, string>> | undefined,
  inherited: readonly string[],
): Record<string, string> {
  const env: Record<string, string | undefined> = {};
  for (const name of inherited) env[name] = undefined;
  Object.assign(env, toolEnv, serverEnv);
  return env as Record<string, string>;
}

function stderrSuffix(connection: Pick<Connection, 'stderr'>): string {
  const text = connection.stderr.text.trim();
  return text === '' ? '' : `\nstderr (last ${STDERR_TAIL_BYTES} bytes):\n${text}`;
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
