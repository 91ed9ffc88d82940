/**
 * MCP servers an agent uses, keyed by server name (`mcpServers`), in the Claude Agent SDK's
 * words.
 *
 * @module
 */

/**
 * A server the worker starts as a child process and talks to over its stdin and stdout.
 *
 * @example
 * { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/docs'] }
 */
export interface McpStdioServerConfig {
  /** Discriminant. @default 'stdio' */
  type?: 'stdio';
  /** The executable, looked up on the `PATH` of the server's environment; not run by a shell. */
  command: string;
  /** Its arguments. @default [] */
  args?: string[];
  /**
   * Variables set for the server on top of the tool environment (`DEFAULT_TOOL_ENV` and
   * `advanced.toolEnv`); the worker's own environment never reaches it.
   * @default {}
   */
  env?: Record<string, string>;
  /** Working directory of the server process. @default the worker's working directory */
  cwd?: string;
}

/** A server reached over MCP's Streamable HTTP transport. */
export interface McpHttpServerConfig {
  /** Discriminant. */
  type: 'http';
  /** The server's MCP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: string;
  /** Headers sent with every request, e.g. `{ Authorization: 'Bearer ...' }`. @default {} */
  headers?: Record<string, string>;
}

/** One MCP server: a process over stdio, or an endpoint over Streamable HTTP. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/**
 * MCP servers by name. A name becomes part of its tools' names (`mcp__<server>__<tool>`), so
 * it must not contain `__`.
 */
export type McpServers = Record<string, McpServerConfig>;
