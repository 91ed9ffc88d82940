/**
 * MCP tools as the session records them: the names the model calls them by, the list a
 * session started with, and the refusal of a call outside it. Workflow-safe (no Node).
 *
 * @module
 */
import { ConfigError } from './errors.js';
import type { JsonObject } from './json.js';
import type { ToolKind } from './types.js';

/** What every MCP tool's name starts with. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** Between the server's name and the tool's in an MCP tool's name. */
const SEPARATOR = '__';

/**
 * The name the model calls an MCP tool by: `mcp__<server>__<tool>`, e.g.
 * `mcp__github__create_issue`, as the Claude Agent SDK names them. The tool's own name may
 * contain `__`; the server's may not, so {@link parseMcpToolName} splits at the first `__`
 * after the prefix.
 *
 * @throws ConfigError when `server` is empty or contains `__`, or `tool` is empty.
 */
export function mcpToolName(server: string, tool: string): string {
  if (server === '' || server.includes(SEPARATOR)) {
    throw new ConfigError(`MCP server name '${server}' must be non-empty and contain no '__'`);
  }
  if (tool === '') throw new ConfigError(`MCP server '${server}' offers a tool with no name`);
  return `${MCP_TOOL_PREFIX}${server}${SEPARATOR}${tool}`;
}

/**
 * The server and tool of an MCP tool's name (see {@link mcpToolName}), or `undefined` for a
 * name that is not one (no `mcp__` prefix, no `__` after the server, an empty part).
 *
 * @example
 * parseMcpToolName('mcp__fs__read__file') // { server: 'fs', tool: 'read__file' }
 */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const at = rest.indexOf(SEPARATOR);
  if (at <= 0) return undefined;
  const tool = rest.slice(at + SEPARATOR.length);
  return tool === '' ? undefined : { server: rest.slice(0, at), tool };
}

/** One MCP tool as a server listed it. */
export interface McpToolSpec {
  /** `mcp__<server>__<tool>`: the name the model calls. */
  name: string;
  /** The server's name (the key in `mcpServers`). */
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  /** What it does, as the server says ('' when it says nothing). */
  description: string;
  /** Its input's JSON Schema, as the server gave it. */
  inputSchema: JsonObject;
  /** The server's hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`, ...). */
  annotations?: JsonObject;
  /** For permission: `readonly` when the server says `readOnlyHint`, else `write`. */
  kind: ToolKind;
  /** sha256 (hex) of its name, description, input schema and annotations. */
  digest: string;
}

/** The MCP tools a session started with (the `listMcpTools` activity's result). */
export interface McpToolList {
  /** Every tool of the servers that answered, by server then as listed. */
  tools: McpToolSpec[];
  /** The servers that could not be reached when the list was taken, and why. */
  unavailable: Array<{ server: string; message: string }>;
  /** sha256 (hex) of the tools' digests in order: what model steps name the list by. */
  digest: string;
}

/** Input of the `listMcpTools` activity. */
export interface ListMcpToolsInput {
  sessionId: string;
  agentName: string;
  /** The session's version: a worker of another version refuses. */
  version?: string;
  fingerprint?: string;
}

/** What `executeTool` of an MCP tool carries: which tool, as the session recorded it. */
export interface McpToolRef {
  server: string;
  tool: string;
  /** The digest the session recorded: a server whose tool changed since is refused. */
  digest: string;
  /** The digest of the session's list (`McpToolList.digest`), to name what changed. */
  list: string;
}

/** The recorded spec of the MCP tool `name`; undefined when the list has none. */
export function recordedMcpTool(list: McpToolList | undefined, name: string) {
  return list?.tools.find((tool) => tool.name === name);
}

/**
 * Why a call of the MCP tool `name` is refused without reaching its server: it is not in
 * the list the session started with. Names the server's state and what it did offer.
 */
export function unlistedMcpToolMessage(list: McpToolList | undefined, name: string): string {
  const parsed = parseMcpToolName(name);
  const server = parsed?.server ?? name;
  const down = list?.unavailable.find((entry) => entry.server === server);
  if (down) {
    return `MCP tool '${name}' cannot be called: server '${server}' was unavailable when this session started (${down.message})`;
  }
  const offered = (list?.tools ?? []).filter((tool) => tool.server === server);
  if (offered.length === 0) {
    return `MCP tool '${name}' is not in this session's tools: no MCP server '${server}'`;
  }
  return (
    `MCP tool '${name}' is not in the tool list this session started with; ` +
    `server '${server}' offers ${offered.map((tool) => `'${tool.tool}'`).join(', ')}`
  );
}
