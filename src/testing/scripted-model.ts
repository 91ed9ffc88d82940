/**
 * A deterministic model for offline runs and tests: it answers from a script and records
 * what it was sent.
 *
 * @module
 */
import { ModelError } from '../common/errors.js';
import type { ModelStepOutput } from '../common/protocol.js';
import type { AgentModel, ModelStepRequest } from '../models/model.js';

/** One scripted model turn: assistant text. */
export type ScriptedTurn = string | { text: string };

/** A scripted model, with what it was sent. */
export interface ScriptedModel extends AgentModel {
  /** Every request it answered, in the order answered (signals left out). */
  readonly requests: ReadonlyArray<Omit<ModelStepRequest, 'signal'>>;
  /** The prompts that reached it (first steps only), in order. */
  readonly prompts: ReadonlyArray<NonNullable<ModelStepRequest['prompt']>>;
}

/**
 * A deterministic model.
 *
 * @param turns assistant turns. Given a list, the session's n-th model step (counted across
 *   prompts, so a restarted worker answers the same) gets `turns[n]`; past the end it
 *   throws. Given a function, it is called with each request.
 * @throws {ModelError} (from `step`) when the script has no turn for a step.
 */
export function scriptedModel(
  turns:
    | readonly ScriptedTurn[]
    | ((request: Omit<ModelStepRequest, 'signal'>) => ScriptedTurn | Promise<ScriptedTurn>),
): ScriptedModel {
  const requests: Array<Omit<ModelStepRequest, 'signal'>> = [];
  const prompts: Array<NonNullable<ModelStepRequest['prompt']>> = [];
  return {
    name: 'scripted',
    requests,
    prompts,
    async step(request: ModelStepRequest): Promise<ModelStepOutput> {
      const { signal: _signal, ...recorded } = request;
      requests.push(recorded);
      if (request.prompt !== undefined) prompts.push(request.prompt);
      let turn: ScriptedTurn | undefined;
      if (typeof turns === 'function') {
        turn = await turns(recorded);
      } else {
        turn = turns[request.modelStepIndex];
        if (turn === undefined) {
          throw new ModelError(
            `scriptedModel has ${turns.length} turn(s); the session asked for turn ${request.modelStepIndex + 1}`,
          );
        }
      }
      const text = typeof turn === 'string' ? turn : turn.text;
      return { text, finishReason: 'stop' };
    },
  };
}
