/**
 * Turn the `model` option into an {@link AgentModel}.
 *
 * @module
 */
import { ModelError } from '../common/errors.js';
import type { ResolvedAgentOptions } from '../options.js';
import type { AgentModel } from './model.js';

/** The agent's model: a model object as given, or a provider model for a model id. */
export function resolveModel(options: ResolvedAgentOptions): AgentModel {
  if (typeof options.model !== 'string') return options.model;
  const id = options.model;
  return {
    name: id,
    async step() {
      throw new ModelError(
        `Model '${id}': provider models are not wired in yet; pass a model object such as scriptedModel([...])`,
      );
    },
  };
}
