/**
 * The options of sub-agents (`advanced.subagents`), as given and after resolving: the
 * sub-agents the model may delegate to through the `Task` tool, and the limits of delegation.
 * `options.ts` re-exports them with the other options.
 *
 * @module
 */
import type { PermissionHandler, PermissionPreset } from '../common/permission.js';
import type { HookMap } from '../common/types.js';
import type { AgentModel } from '../models/model.js';
import type { ToolDefinition } from '../tools/tool.js';

/**
 * `advanced.subagents`: the sub-agents the model may delegate to through the `Task` tool,
 * and the limits of delegation. All of it is part of the definition's fingerprint except
 * each sub-agent's `prompt` and `model` (as the agent's own model is not).
 */
export interface SubagentsOptions {
  /**
   * The sub-agents by name (the `Task` tool's `subagent_type`).
   * @throws {ConfigError} at `createAgent` when empty, or a name is not 1 to 64 letters,
   *   digits, `_` or `-`, or is `main` (the top session's path).
   */
  agents: Record<string, SubagentDefinition>;
  /**
   * How deep sub-agents may nest: 1, sub-agents spawn none; 2, a sub-agent may spawn the
   * ones its `subagents` names; an integer from 1 to 4.
   * @default 1
   * @throws {ConfigError} at `createAgent` when out of range or not an integer.
   */
  maxDepth?: number;
  /**
   * How many sub-agents of one session may run at once; an integer from 1 to 32. A `Task`
   * call past it ends in a tool error.
   * @default 4
   * @throws {ConfigError} at `createAgent` when out of range or not an integer.
   */
  maxConcurrent?: number;
  /**
   * Time budget of one `Task` call from its sub-agent's start, ms; past it the sub-agent is
   * cancelled and the call ends in a tool error. An integer in (0, 2147483647].
   * @default 3600000 (1 h)
   * @throws {ConfigError} at `createAgent` when out of range or not an integer.
   */
  timeoutMs?: number;
}

/**
 * One sub-agent. The field names follow the Claude Agent SDK's `AgentDefinition`.
 * @throws {ConfigError} at `createAgent` for a bad field, naming its path
 *   (`advanced.subagents.agents.<name>.<field>`).
 */
export interface SubagentDefinition {
  /** What it is for, in a line: the model reads it in the `Task` tool's description. */
  description: string;
  /** Its instructions: sent to its model as the system message of every step. */
  prompt: string;
  /**
   * Names of the agent's tools it may call. It gets the `Task` tool by its `subagents`
   * instead: naming `Task` here changes nothing, and is refused while `maxDepth` is 1 or
   * `subagents` is empty. MCP tools of the agent's `mcpServers` by name or pattern, as
   * permission rules name them: `mcp__notes__read_note`, `mcp__notes__*`, or `mcp__notes`
   * (every tool of the server); it may call those of the session's list that match.
   * @default every tool of the agent but `Task`, and every MCP tool of the session
   * @throws {ConfigError} at `createAgent` for a name the agent has no tool of (the message
   *   lists the agent's tools), or an `mcp__` name of a server `mcpServers` does not have.
   */
  tools?: string[];
  /**
   * Its model: a model id, a model object, or `'inherit'` (the agent's). A model id goes
   * where the agent's ids go (`baseUrl`), with the agent's `apiKey` when that is for the same
   * provider, else with its provider's variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`).
   * @default 'inherit'
   * @throws {ConfigError} at worker start when its id needs a key that nothing gives.
   */
  model?: string | AgentModel | 'inherit';
  /** Most model steps of one `Task` call; past it the call ends with what it has. @default the agent's `maxTurns` */
  maxTurns?: number;
  /**
   * Its agent-level hooks, in place of the agent's; `'inherit'`: the agent's. A session's own
   * hooks (`SessionOptions.hooks`) apply to its sub-agents either way.
   * @default 'inherit'
   */
  hooks?: HookMap | 'inherit';
  /** Who decides whether its tool calls run; `'inherit'`: the session's. @default 'inherit' */
  permission?: PermissionPreset | PermissionHandler | 'inherit';
  /**
   * The sub-agents it may spawn, by name, when `maxDepth` is deeper than it.
   * @default none
   * @throws {ConfigError} at `createAgent` for an unknown name, or any name while `maxDepth` is 1.
   */
  subagents?: string[];
  /** This sub-agent's `Task` budget, ms. @default `SubagentsOptions.timeoutMs` */
  timeoutMs?: number;
}

/** One sub-agent after resolving: every default filled in, tools as definitions. */
export interface ResolvedSubagent {
  name: string;
  description: string;
  prompt: string;
  /** The agent's tools it may call (never `Task`). */
  tools: ToolDefinition[];
  /** The MCP tools it may call, as patterns (`mcp__notes__*`); undefined: all the session's. */
  mcpTools?: string[];
  /** `'inherit'`: the agent's model. */
  model: string | AgentModel | 'inherit';
  maxTurns: number;
  /** Undefined: the agent's hooks. */
  hooks: HookMap | undefined;
  /** Undefined: the session's permission (the agent's, or the session's handler). */
  permission: PermissionPreset | PermissionHandler | undefined;
  /** The sub-agents it may spawn (empty when `maxDepth` is 1). */
  subagents: string[];
  timeoutMs: number;
}

/** `advanced.subagents` after resolving. */
export interface ResolvedSubagents {
  maxDepth: number;
  maxConcurrent: number;
  timeoutMs: number;
  /** By name, in the order given. */
  agents: Record<string, ResolvedSubagent>;
}
