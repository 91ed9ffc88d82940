/**
 * What a worker's registry holds of a definition's sub-agents: their own hooks, permission
 * function, tools (and `Task` tool), model and instructions.
 *
 * @module
 */
import type { ResolvedAgentOptions, ResolvedSubagent } from '../definition/options.js';
import type { RegisteredSubagent } from '../definition/registry.js';
import type { AgentModel } from '../models/model.js';
import { providerOf } from '../models/provider.js';
import { resolveModel } from '../models/resolve.js';
import { taskTool } from '../tools/builtin/task.js';

/**
 * The sub-agents of `options` as the registry holds them, by name; undefined when it has none.
 * @throws {ConfigError} when a sub-agent's model id needs an API key that nothing gives.
 */
export function subagentRegistrations(
  options: ResolvedAgentOptions,
): ReadonlyMap<string, RegisteredSubagent> | undefined {
  if (!options.subagents) return undefined;
  const { agents, maxDepth } = options.subagents;
  const subagents = new Map<string, RegisteredSubagent>();
  for (const [name, subagent] of Object.entries(agents)) {
    const model = subagentModel(options, subagent);
    // Its Task tool lists only the sub-agents it may start.
    const mayUse = subagent.subagents.map((n) => ({
      name: n,
      description: agents[n]!.description,
    }));
    subagents.set(name, {
      tools: subagent.tools,
      prompt: subagent.prompt,
      ...(mayUse.length > 0 ? { spawn: { tool: taskTool(mayUse), maxDepth } } : {}),
      ...(subagent.hooks ? { hooks: subagent.hooks } : {}),
      ...(typeof subagent.permission === 'function' ? { permission: subagent.permission } : {}),
      ...(model ? { model } : {}),
    });
  }
  return subagents;
}

/**
 * A sub-agent's own model; undefined when it inherits the agent's. A model id goes where the
 * agent's ids go (`baseUrl`), with the agent's `apiKey` when that is for the same provider
 * (or the agent's model is an object), else with its provider's variable.
 */
function subagentModel(
  options: ResolvedAgentOptions,
  subagent: ResolvedSubagent,
): AgentModel | undefined {
  const { model } = subagent;
  if (model === 'inherit') return undefined;
  if (typeof model !== 'string') return model;
  const where = { baseUrl: options.baseUrl };
  const sameProvider =
    typeof options.model !== 'string' ||
    providerOf(options.model, where) === providerOf(model, where);
  return resolveModel({
    model,
    modelTimeoutMs: options.modelTimeoutMs,
    baseUrl: options.baseUrl,
    ...(sameProvider ? { apiKey: options.apiKey } : {}),
  });
}
