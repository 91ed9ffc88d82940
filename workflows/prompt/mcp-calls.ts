/**
 * An MCP call in the tool pipeline: which recorded tool it names, how it is described
 * (its kind from the server's hints, no paths), and what `executeTool` carries so the worker
 * can refuse a tool changed since the session listed it. Workflow code.
 *
 * @module
 */
import type { ToolCall } from '../../src/common/conversation.js';
import {
  parseMcpToolName,
  recordedMcpTool,
  type McpToolList,
  type McpToolRef,
  type McpToolSpec,
} from '../../src/common/mcp.js';
import type { ToolCallDescription } from '../../src/common/activity-io.js';
import { allowedByPatterns } from '../../src/common/permission-rules.js';
import type { SessionWorkflowInput, SubagentSpec } from '../../src/common/workflow-io.js';

/** A call of an MCP tool, by name; `recorded` absent when the session's list has none. */
export interface McpCall {
  server: string;
  tool: string;
  recorded: McpToolSpec | undefined;
}

/**
 * The MCP tool `call` names, in a session with MCP servers; undefined for any other call
 * (a custom tool named `mcp__...` in a session without MCP servers is an ordinary tool).
 */
export function mcpCallOf(
  state: { input: SessionWorkflowInput; mcpTools?: McpToolList },
  call: ToolCall,
): McpCall | undefined {
  if (!state.input.mcpServers?.length) return undefined;
  const parsed = parseMcpToolName(call.toolName);
  // A tool a sub-agent may not call is not one of its tools: unknown, as any other.
  if (!parsed || !allowedByPatterns(state.input.mcpAllow, call.toolName)) return undefined;
  return { ...parsed, recorded: recordedMcpTool(state.mcpTools, call.toolName) };
}

/** An MCP call as its recorded spec says: its kind from the server's hints, no paths. */
export function describeMcpCall(recorded: McpToolSpec | undefined): ToolCallDescription {
  return recorded
    ? { known: true, kind: recorded.kind, affectedPaths: [] }
    : { known: false, kind: 'execute', affectedPaths: [] };
}

/**
 * What a sub-agent of spec `spec` gets of the session's MCP tools: the same list (it lists
 * none of its own), and, when its definition names its tools or the session itself may call
 * only some, the names it may call (those both allow); nothing without MCP servers.
 */
export function childMcpTools(
  state: { input: SessionWorkflowInput; mcpTools?: McpToolList },
  spec: SubagentSpec,
): Pick<SessionWorkflowInput, 'mcpTools' | 'mcpAllow'> {
  if (!state.input.mcpServers?.length) return {};
  const own = state.input.mcpAllow;
  const limits = [own, spec.mcpTools].filter((p): p is string[] => p !== undefined);
  const allowed = (name: string) => limits.every((patterns) => allowedByPatterns(patterns, name));
  return {
    ...(state.mcpTools ? { mcpTools: state.mcpTools } : {}),
    ...(limits.length > 0
      ? { mcpAllow: (state.mcpTools?.tools ?? []).map((t) => t.name).filter(allowed) }
      : {}),
  };
}

/** Whether the server marks the recorded tool idempotent (`idempotentHint`). */
export function mcpIdempotent(call: McpCall | undefined): boolean {
  return call?.recorded?.annotations?.['idempotentHint'] === true;
}

/** What `executeTool` of a recorded MCP tool carries; undefined for any other call. */
export function mcpRefOf(
  state: { mcpTools?: McpToolList },
  call: McpCall | undefined,
): McpToolRef | undefined {
  const recorded = call?.recorded;
  if (!recorded || !state.mcpTools) return undefined;
  return {
    server: recorded.server,
    tool: recorded.tool,
    digest: recorded.digest,
    list: state.mcpTools.digest,
  };
}
