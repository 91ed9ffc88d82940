/**
 * Turn the `model` option into an {@link AgentModel}.
 *
 * @module
 */
import type { ResolvedAgentOptions } from '../options.js';
import type { AgentModel } from './model.js';
import { providerModel } from './provider.js';

/**
 * The agent's model: a model object as given, or a provider model (Vercel AI SDK) for a
 * model id: `claude-*` ids go to Anthropic, others to OpenAI, and any id with `baseUrl` to
 * that OpenAI-compatible endpoint.
 */
export function resolveModel(options: ResolvedAgentOptions): AgentModel {
  if (typeof options.model !== 'string') return options.model;
  return providerModel({
    model: options.model,
    timeoutMs: options.modelTimeoutMs,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
  });
}
