/**
 * Resolving `advanced.subagents`: the checks that need the rest of the definition (a
 * sub-agent's tools against the agent's, the names in `subagents`, `maxDepth`), the
 * defaults, and the `Task` tool. The shape of each field is checked before, by
 * `subagent-rules.ts`.
 *
 * @module
 */
import { DEFAULTS } from '../common/defaults.js';
import { ConfigError } from '../common/errors.js';
import { MCP_TOOL_PREFIX } from '../common/mcp.js';
import { TASK_TOOL } from '../common/subagents.js';
import { taskTool } from '../tools/builtin/task.js';
import type { HookMap } from '../common/types.js';
import type { ToolDefinition } from '../tools/tool.js';
import type {
  ResolvedSubagent,
  ResolvedSubagents,
  SubagentDefinition,
  SubagentsOptions,
} from './options.js';

const PATH = 'advanced.subagents';

/**
 * `advanced.subagents` with every default filled in, and the agent's tools with the `Task`
 * tool last; `undefined` and the tools as given when it is not set.
 *
 * @param tools the agent's tools (`tools`, else the built-ins).
 * @param maxTurns the agent's `maxTurns`, each sub-agent's default.
 * @param mcpServers the names of the agent's `mcpServers`.
 * @throws {ConfigError} naming each problem's path: a sub-agent's tool the agent lacks (and
 *   the agent's tools), an `mcp__` tool of a server the agent lacks, an agent tool named `Task`, an unknown name in a sub-agent's
 *   `subagents`, `Task` or `subagents` in a sub-agent while `maxDepth` is 1.
 */
export function resolveSubagents(
  options: SubagentsOptions | undefined,
  tools: ToolDefinition[],
  maxTurns: number,
  mcpServers: readonly string[] = [],
): { subagents?: ResolvedSubagents; tools: ToolDefinition[] } {
  if (options === undefined) return { tools };
  const maxDepth = options.maxDepth ?? DEFAULTS.subagentsMaxDepth;
  const timeoutMs = options.timeoutMs ?? DEFAULTS.subagentsTimeoutMs;
  const problems: string[] = [];
  if (tools.some((tool) => tool.name === TASK_TOOL)) {
    problems.push(
      `tools has a tool named '${TASK_TOOL}' beside ${PATH}, which adds the built-in ` +
        `'${TASK_TOOL}' tool: rename yours`,
    );
  }
  const names = Object.keys(options.agents);
  const agents: Record<string, ResolvedSubagent> = {};
  for (const [name, definition] of Object.entries(options.agents)) {
    const path = `${PATH}.agents.${name}`;
    const problem = (message: string) => problems.push(`${path}${message}`);
    agents[name] = {
      name,
      description: definition.description,
      prompt: definition.prompt,
      tools: subagentTools(definition, tools, maxDepth, problem),
      ...subagentMcpTools(definition, tools, mcpServers, problem),
      model: definition.model ?? 'inherit',
      maxTurns: definition.maxTurns ?? maxTurns,
      hooks:
        definition.hooks === undefined || definition.hooks === 'inherit'
          ? undefined
          : copyHooks(definition.hooks),
      permission: definition.permission === 'inherit' ? undefined : definition.permission,
      subagents: spawnable(definition, names, maxDepth, problem),
      timeoutMs: definition.timeoutMs ?? timeoutMs,
    };
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid agent options: ${problems.join('; ')}`);
  }
  const subagents: ResolvedSubagents = {
    maxDepth,
    maxConcurrent: options.maxConcurrent ?? DEFAULTS.subagentsMaxConcurrent,
    timeoutMs,
    agents,
  };
  const task = taskTool(names.map((name) => ({ name, description: agents[name]!.description })));
  return { subagents, tools: [...tools, task] };
}

/** The agent's tools a sub-agent may call (never `Task`: it gets that by its depth). */
function subagentTools(
  definition: SubagentDefinition,
  tools: readonly ToolDefinition[],
  maxDepth: number,
  problem: (message: string) => void,
): ToolDefinition[] {
  const own = tools.filter((tool) => tool.name !== TASK_TOOL);
  if (definition.tools === undefined) return own;
  const byName = new Map(own.map((tool) => [tool.name, tool]));
  const chosen: ToolDefinition[] = [];
  for (const name of definition.tools) {
    const tool = byName.get(name);
    if (tool) chosen.push(tool);
    else if (name.startsWith(MCP_TOOL_PREFIX))
      continue; // an MCP tool: `subagentMcpTools`
    else if (name !== TASK_TOOL) {
      problem(
        `.tools: '${name}' is not a tool of the agent (it has: ${own.map((t) => t.name).join(', ') || 'none'})`,
      );
    } else if (maxDepth === 1) {
      problem(
        `.tools: '${TASK_TOOL}' while ${PATH}.maxDepth is 1 (sub-agents spawn none): raise maxDepth or drop it`,
      );
    } else if ((definition.subagents ?? []).length === 0) {
      problem(
        `.tools: '${TASK_TOOL}' without subagents: name the sub-agents it may spawn in its subagents`,
      );
    }
  }
  return chosen;
}

/**
 * The MCP tools a sub-agent that lists its `tools` may call: its `mcp__` names, kept as
 * patterns (the session's list is only known when it opens); none when it lists none. Nothing
 * when `tools` is not given (it may call every MCP tool of the session) or the agent has no
 * MCP servers.
 */
function subagentMcpTools(
  definition: SubagentDefinition,
  tools: readonly ToolDefinition[],
  mcpServers: readonly string[],
  problem: (message: string) => void,
): { mcpTools?: string[] } {
  if (definition.tools === undefined) return {};
  // A tool of the agent's own named `mcp__...` is an ordinary tool (`subagentTools`).
  const patterns = definition.tools.filter(
    (name) => name.startsWith(MCP_TOOL_PREFIX) && !tools.some((tool) => tool.name === name),
  );
  for (const pattern of patterns) {
    const server = pattern.slice(MCP_TOOL_PREFIX.length).split('__')[0]!;
    if (!mcpServers.includes(server)) {
      problem(
        `.tools: '${pattern}' names MCP server '${server}', which mcpServers does not have ` +
          `(it has: ${mcpServers.join(', ') || 'none'})`,
      );
    }
  }
  // Without MCP servers there is nothing to limit (and earlier inputs and fingerprints hold).
  return mcpServers.length > 0 ? { mcpTools: patterns } : {};
}

/** The sub-agents a sub-agent may spawn. */
function spawnable(
  definition: SubagentDefinition,
  names: readonly string[],
  maxDepth: number,
  problem: (message: string) => void,
): string[] {
  const wanted = definition.subagents ?? [];
  if (wanted.length > 0 && maxDepth === 1) {
    problem(
      `.subagents: set while ${PATH}.maxDepth is 1 (sub-agents spawn none): raise maxDepth or drop it`,
    );
  }
  for (const name of wanted) {
    if (!names.includes(name)) {
      problem(`.subagents: '${name}' is not a sub-agent (known: ${names.join(', ')})`);
    }
  }
  return [...wanted];
}

function copyHooks(hooks: HookMap): HookMap {
  return Object.fromEntries(
    Object.entries(hooks).map(([event, callbacks]) => [event, [...(callbacks ?? [])]]),
  ) as HookMap;
}
