/** `advanced.budgets` and a session's `budgets`: ConfigErrors naming the field, the spec a session records. */
import { describe, expect, it } from 'vitest';
import { ConfigError, type AgentOptions } from '../../../src/index.js';
import { resolveAgentOptions, validateSessionOptions } from '../../../src/definition/resolve.js';
import { sessionBudgetSpec } from '../../../src/definition/budget-rules.js';
import { sessionWorkflowInput } from '../../../src/client/session-input.js';
import { scriptedModel } from '../../../src/testing/index.js';

const agent = (budgets: unknown, model: AgentOptions['model'] = 'gpt-4o'): AgentOptions => ({
  model,
  apiKey: 'sk-test',
  advanced: { budgets: budgets as never },
});
const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no ConfigError');
};

describe('advanced.budgets', () => {
  it.each([
    [{ totalTokens: -1 }, 'advanced.budgets.totalTokens must be a non-negative integer, got -1'],
    [
      { outputTokens: 2.5 },
      'advanced.budgets.outputTokens must be a non-negative integer, got 2.5',
    ],
    [{ costUsd: -0.5 }, 'advanced.budgets.costUsd must be a non-negative number of US dollars'],
    [
      { maxOutputTokens: 0 },
      'advanced.budgets.maxOutputTokens must be an integer from 1 to 1000000',
    ],
    [{ tokens: 3 }, "advanced.budgets has an unknown key 'tokens'"],
    [
      { prices: { 'gpt-4o': { inputUsdPerMillion: -1, outputUsdPerMillion: 1 } } },
      "advanced.budgets.prices['gpt-4o'].inputUsdPerMillion must be a non-negative number",
    ],
  ])('%j is refused naming the field', (budgets, message) => {
    expect(refusal(() => resolveAgentOptions(agent(budgets)))).toContain(message);
  });

  it('a price for a model the agent does not use is refused, naming it and the models it uses', () => {
    const message = refusal(() =>
      resolveAgentOptions(
        agent({ prices: { 'gpt-5': { inputUsdPerMillion: 1, outputUsdPerMillion: 1 } } }),
      ),
    );
    expect(message).toContain(
      "advanced.budgets.prices['gpt-5'] is for a model this agent does not use",
    );
    expect(message).toContain("'gpt-4o'");
  });

  it("a model object's price goes under its name or the id after `provider:`", () => {
    const model = { name: 'openai:gpt-4o', step: scriptedModel(() => 'ok').step };
    const price = { inputUsdPerMillion: 1, outputUsdPerMillion: 1 };
    for (const id of ['openai:gpt-4o', 'gpt-4o']) {
      expect(() =>
        resolveAgentOptions(agent({ costUsd: 1, prices: { [id]: price } }, model)),
      ).not.toThrow();
    }
  });

  it('costUsd without a price for the agent model is refused', () => {
    expect(refusal(() => resolveAgentOptions(agent({ costUsd: 1 })))).toContain(
      "advanced.budgets.costUsd needs a price for the agent's model",
    );
  });

  it('the fingerprint changes when budgets are set, and not otherwise', () => {
    const none = resolveAgentOptions({ model: 'gpt-4o', apiKey: 'k' });
    const empty = resolveAgentOptions({ model: 'gpt-4o', apiKey: 'k', advanced: {} });
    const set = resolveAgentOptions(agent({ totalTokens: 10 }));
    expect(empty.fingerprint).toBe(none.fingerprint);
    expect(none.manifest.budgets).toBeUndefined();
    expect(set.fingerprint).not.toBe(none.fingerprint);
  });
});

describe("a session's budgets", () => {
  it('a negative or non-integer cap is refused naming the field', () => {
    expect(refusal(() => validateSessionOptions({ budgets: { modelCalls: -2 } }))).toContain(
      'budgets.modelCalls must be a non-negative integer, got -2',
    );
    expect(refusal(() => validateSessionOptions({ budgets: { toolCalls: 0.5 } }))).toContain(
      'budgets.toolCalls must be a non-negative integer, got 0.5',
    );
  });

  it('costUsd when the agent prices no model is refused', () => {
    expect(refusal(() => sessionBudgetSpec(undefined, 'gpt-4o', { costUsd: 1 }))).toContain(
      'budgets.costUsd needs a price',
    );
  });

  it('the lower of the agent and the session holds; the input has no budget when neither sets one', () => {
    const options = resolveAgentOptions(
      agent({
        totalTokens: 100,
        maxOutputTokens: 50,
        prices: { 'gpt-4o': { inputUsdPerMillion: 2, outputUsdPerMillion: 8 } },
      }),
    );
    expect(sessionWorkflowInput(options, 's', { budgets: { totalTokens: 40 } }).budget).toEqual({
      caps: { totalTokens: 40 },
      maxOutputTokens: 50,
      price: { inputUsdPerMillion: 2, outputUsdPerMillion: 8 },
    });
    const plain = resolveAgentOptions({ model: 'gpt-4o', apiKey: 'k' });
    expect('budget' in sessionWorkflowInput(plain, 's', {})).toBe(false);
  });
});

describe("sub-agents' prices", () => {
  const priced = { 'gpt-4o': { inputUsdPerMillion: 2, outputUsdPerMillion: 8 } };
  const withSubagents = (budgets: unknown) =>
    resolveAgentOptions({
      ...agent(budgets),
      advanced: {
        budgets: budgets as never,
        subagents: {
          agents: {
            same: { description: 'd', prompt: 'p' },
            other: { description: 'd', prompt: 'p', model: 'gpt-4o-mini' },
          },
        },
      },
    });
  const specs = (budgets: unknown, session: object = {}) =>
    sessionWorkflowInput(withSubagents(budgets), 's', session).subagents!.agents;

  it('each sub-agent carries its model price (the agent one when it inherits) with a budget', () => {
    const prices = { ...priced, 'gpt-4o-mini': { inputUsdPerMillion: 1, outputUsdPerMillion: 1 } };
    expect(specs({ totalTokens: 10, prices }).map((s) => [s.name, s.price])).toEqual([
      ['same', prices['gpt-4o']],
      ['other', prices['gpt-4o-mini']],
    ]);
    // Without a budget the input is as it was.
    expect(specs(undefined).some((s) => 'price' in s)).toBe(false);
  });

  it('costUsd with a sub-agent whose model has no price is refused, naming it', () => {
    expect(refusal(() => specs({ costUsd: 1, prices: priced }))).toContain(
      "sub-agent 'other''s spend, which needs a price for its model",
    );
    expect(refusal(() => specs({ prices: priced }, { budgets: { costUsd: 1 } }))).toContain(
      "advanced.budgets.prices['gpt-4o-mini']",
    );
  });
});
