/**
 * MCP on the worker: the `listMcpTools` activity a session runs when it opens, the tools a
 * model step offers (exactly the list the session recorded), and the tool an MCP call runs
 * (refused when the server's tool changed since the session listed it).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Context } from '@temporalio/activity';
import { z } from 'zod';
import { AgentSdkError } from '../src/common/errors.js';
import type { JsonObject } from '../src/common/json.js';
import { Queries } from '../src/common/messages.js';
import type { ListMcpToolsInput, McpToolList, McpToolRef, McpToolSpec } from '../src/common/mcp.js';
import type { ToolResult } from '../src/common/types.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import type { McpConnections } from '../src/mcp/connections.js';
import { mcpResultToToolResult } from '../src/mcp/result.js';
import { describeToolChange } from '../src/mcp/tools.js';
import type { ToolDefinition } from '../src/tools/tool.js';

/** Most tool lists a worker keeps by digest (a list per definition, as a rule). */
const KEPT_LISTS = 32;

/** The digest of a list of tools: sha256 (hex) of their digests in order. */
function mcpListDigest(tools: readonly McpToolSpec[]): string {
  const hash = createHash('sha256');
  for (const tool of tools) hash.update(`${tool.name}\n${tool.digest}\n`);
  return hash.digest('hex');
}

/** An MCP call's arguments: any JSON object; the server checks them against its schema. */
const mcpInput = z.record(z.string(), z.unknown()) as unknown as z.ZodType<JsonObject>;

/**
 * The MCP tool lists this worker has seen, by digest, so model steps offer the session's
 * list without asking the workflow for it.
 */
export class McpToolLists {
  readonly #lists = new Map<string, McpToolList>();

  /** Keep `list` (the oldest goes past {@link KEPT_LISTS}). */
  remember(list: McpToolList): void {
    this.#lists.delete(list.digest);
    this.#lists.set(list.digest, list);
    if (this.#lists.size > KEPT_LISTS) this.#lists.delete(this.#lists.keys().next().value!);
  }

  /**
   * The list of digest `digest`: this worker's copy, else the session's own (by query: the
   * list is in the workflow's state).
   * @throws Error when the session has no list of that digest.
   */
  async get(ctx: Context, digest: string): Promise<McpToolList> {
    const kept = this.#lists.get(digest);
    if (kept) return kept;
    const execution = ctx.info.workflowExecution;
    if (!execution) throw new Error(`No MCP tool list of digest ${digest.slice(0, 12)} here`);
    const list = await ctx.client.workflow
      .getHandle(execution.workflowId, execution.runId)
      .query(Queries.mcpTools);
    if (!list || list.digest !== digest) {
      throw new Error(
        `Session '${execution.workflowId}' has no MCP tool list of digest ${digest.slice(0, 12)}`,
      );
    }
    this.remember(list);
    return list;
  }
}

/** Build `listMcpTools`. */
export function createMcpActivities(deps: { registry: AgentRegistry; lists: McpToolLists }) {
  return {
    /**
     * The tools of the definition's MCP servers, for a session opening. A server that cannot
     * be reached is listed as unavailable, with why; the others' tools are listed.
     */
    async listMcpTools(input: ListMcpToolsInput): Promise<McpToolList> {
      const agent = deps.registry.agent(input.agentName, input.version);
      if (!agent.mcp) return { tools: [], unavailable: [], digest: mcpListDigest([]) };
      const { tools, unavailable } = await agent.mcp.listAll();
      const list = { tools, unavailable, digest: mcpListDigest(tools) };
      deps.lists.remember(list);
      return list;
    },
  };
}

/**
 * A recorded MCP tool as the model sees it: its name, description and the server's JSON
 * Schema as given (`inputJsonSchema`). Never executed: calls run {@link mcpCallTool}.
 */
export function offeredMcpTool(spec: McpToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    kind: spec.kind,
    inputSchema: mcpInput,
    inputJsonSchema: spec.inputSchema,
    execute: () => Promise.reject(new Error(`${spec.name} is offered, not run, here`)),
  };
}

/**
 * The tool an MCP call runs: it lists the server's tool, refuses a tool whose digest is not
 * the one the session recorded (naming what changed), then calls it with the call's signal
 * (an abort or the budget sends MCP's cancellation) and reports progress as heartbeats.
 */
export function mcpCallTool(
  connections: McpConnections,
  name: string,
  ref: McpToolRef,
  recorded: () => Promise<McpToolSpec | undefined>,
): ToolDefinition {
  return {
    name,
    description: '',
    kind: 'write',
    inputSchema: mcpInput,
    async execute(input, context): Promise<ToolResult> {
      try {
        const current = (await connections.listTools(ref.server)).find(
          (tool) => tool.tool === ref.tool,
        );
        if (current?.digest !== ref.digest) {
          const before = await recorded();
          const change = before
            ? describeToolChange(before, current)
            : current
              ? 'its definition differs'
              : 'the server no longer lists it';
          const message = `MCP tool '${name}' changed since this session listed it; not called: ${change}`;
          return { status: 'error', model: message, error: { message, type: 'McpToolChanged' } };
        }
        const result = await connections.callTool(ref.server, ref.tool, input, {
          signal: context.signal,
          onProgress: (progress) => context.heartbeat({ mcpProgress: progress }),
          timeoutMs: context.timeoutMs,
        });
        return await mcpResultToToolResult(result, {
          maxOutputBytes: context.maxOutputBytes,
          ...(context.saveFullOutput ? { saveFullOutput: context.saveFullOutput } : {}),
        });
      } catch (error) {
        if (context.signal.aborted) throw error;
        if (!(error instanceof AgentSdkError)) throw error;
        // A server that is down: the model gets an error naming it; the session goes on.
        return {
          status: 'error',
          model: error.message,
          error: { message: error.message, type: error.name, code: error.code },
        };
      }
    },
  };
}
