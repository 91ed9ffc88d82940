/**
 * The MCP tool list a session used, read from its history: the `listMcpTools` activity's
 * result in a first run, the carried list in a later one (`inspect` and the gate show it).
 *
 * @module
 */
import type { McpToolList } from '../common/mcp.js';
import type { HistoryMcpTools } from './timeline-types.js';

/** The list as the timeline keeps it (names and digests; schemas stay in the history). */
export function historyMcpTools(list: unknown): HistoryMcpTools | undefined {
  const value = list as Partial<McpToolList> | null | undefined;
  if (!value || typeof value.digest !== 'string' || !Array.isArray(value.tools)) return undefined;
  return {
    digest: value.digest,
    tools: value.tools.map(({ name, server, digest }) => ({ name, server, digest })),
    unavailable: Array.isArray(value.unavailable) ? value.unavailable : [],
  };
}

/**
 * One line for `inspect`: `MCP tools: 3 (notes: read_note, write_note, slow), list
 * 0a1b2c3d4e5f; unavailable: gone (why)`.
 */
export function mcpToolsLine(tools: HistoryMcpTools): string {
  const byServer = new Map<string, string[]>();
  for (const tool of tools.tools) {
    const own = tool.name.slice(`mcp__${tool.server}__`.length);
    byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), own]);
  }
  const servers = [...byServer].map(([server, names]) => `${server}: ${names.join(', ')}`);
  const down = tools.unavailable.map((entry) => `${entry.server} (${entry.message})`);
  return (
    `MCP tools: ${tools.tools.length}${servers.length > 0 ? ` (${servers.join('; ')})` : ''}, ` +
    `list ${tools.digest.slice(0, 12) || 'none'}` +
    (down.length > 0 ? `; unavailable: ${down.join(', ')}` : '')
  );
}
