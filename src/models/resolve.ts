/**
 * Turn the `model` option into an {@link AgentModel}.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import type { AgentModel } from './model.js';
import { apiKeyVariable, providerModel, providerOf, type ModelProvider } from './provider.js';

/** How the message names each provider. */
const PROVIDER_NAMES: Record<ModelProvider, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  'openai-compatible': 'an OpenAI-compatible server',
};

/** What {@link resolveModel} reads of the agent's options (their `model`, `apiKey`, `baseUrl` and `modelTimeoutMs`). */
interface ModelOptions {
  /** A model id (`'gpt-4o'`, `'claude-sonnet-4-5'`, any id with `baseUrl`) or a model object. */
  model: string | AgentModel;
  /** The provider's API key; else its environment variable. */
  apiKey?: string | undefined;
  /** An OpenAI-compatible endpoint, e.g. `http://localhost:11434/v1`. */
  baseUrl?: string | undefined;
  /** How long one model call may take, ms. */
  modelTimeoutMs: number;
}

/**
 * The agent's model: a model object as given, or a provider model (Vercel AI SDK) for a
 * model id: `claude-*` ids go to Anthropic, others to OpenAI, and any id with `baseUrl` to
 * that OpenAI-compatible endpoint.
 *
 * The API key of a model id is settled here, once, so a missing key is a `ConfigError` at
 * `createAgent` (or `createAgentWorker`) rather than a failed `send()`: the `apiKey`
 * option, else the provider's environment variable (`OPENAI_API_KEY` for OpenAI,
 * `ANTHROPIC_API_KEY` for Anthropic; an empty or blank value counts as unset). An
 * OpenAI-compatible endpoint (`baseUrl`) needs no key: it gets `apiKey`, else
 * `OPENAI_API_KEY`, else none.
 *
 * Only the worker half calls this: `createAgentClient` never runs a model and needs no key.
 *
 * @param env where the variables are read. @default `process.env`
 * @throws {ConfigError} when the model id's provider needs a key and neither `apiKey` nor
 *   its variable gives one; the message names both.
 */
export function resolveModel(
  options: ModelOptions,
  env: NodeJS.ProcessEnv = process.env,
): AgentModel {
  if (typeof options.model !== 'string') return options.model;
  const provider = providerOf(options.model, { baseUrl: options.baseUrl });
  const { variable, required } = apiKeyVariable(provider);
  const fromEnv = env[variable]?.trim() ? env[variable] : undefined;
  const apiKey = options.apiKey ?? fromEnv;
  if (apiKey === undefined && required) {
    const state = env[variable] === undefined ? 'is not set' : 'is empty';
    throw new ConfigError(
      `model '${options.model}' runs on ${PROVIDER_NAMES[provider]} and needs an API key: ` +
        `pass the \`apiKey\` option, or set ${variable} (it ${state}). ` +
        'A model on an OpenAI-compatible server needs `baseUrl` and no key; ' +
        'a model object (e.g. scriptedModel) needs neither.',
    );
  }
  return providerModel({
    model: options.model,
    timeoutMs: options.modelTimeoutMs,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
  });
}
