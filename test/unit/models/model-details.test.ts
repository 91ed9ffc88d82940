/** Issue 13 items 5 and 22: a ModelError's details across a boundary; the key at createAgent. */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  ModelError,
  ProviderError,
  deserializeError,
  serializeError,
} from '../../../src/common/errors.js';
import { createAgent } from '../../../src/index.js';
import { resolveModel } from '../../../src/models/resolve.js';
import type { AgentOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { tcpProbe } from '../../helpers/tcp-probe.js';

function roundTrip(error: unknown): Error {
  return deserializeError(JSON.parse(JSON.stringify(serializeError(error))));
}

describe('a ModelError across a process or workflow boundary', () => {
  it('a ProviderError comes back a ProviderError with statusCode, retryable, provider and model', () => {
    const error = roundTrip(
      new ProviderError('openai gpt-4o: 503 Service Unavailable', {
        retryable: true,
        statusCode: 503,
        provider: 'openai',
        model: 'gpt-4o',
      }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      code: 'MODEL_ERROR',
      message: 'openai gpt-4o: 503 Service Unavailable',
      retryable: true,
      statusCode: 503,
      provider: 'openai',
      model: 'gpt-4o',
    });
  });

  it('a plain ModelError comes back a ModelError (not a ProviderError) without details', () => {
    const error = roundTrip(new ModelError('the script ran out'));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).not.toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: undefined, statusCode: undefined });
  });

  it('details of errors that are not model errors are not picked up', () => {
    const other = Object.assign(new Error('x'), { statusCode: 500, model: 'm' });
    expect(serializeError(other)).not.toHaveProperty('statusCode');
    expect(serializeError(other)).not.toHaveProperty('model');
  });
});

describe('resolveModel: the API key of a model id', () => {
  const options = (given: Partial<AgentOptions>) =>
    resolveAgentOptions({ model: 'gpt-4o', ...given } as AgentOptions);

  it('an OpenAI id without apiKey or OPENAI_API_KEY is a ConfigError naming both', () => {
    expect(() => resolveModel(options({}), {})).toThrow(
      new ConfigError(
        "model 'gpt-4o' runs on OpenAI and needs an API key: pass the `apiKey` option, or set " +
          'OPENAI_API_KEY (it is not set). A model on an OpenAI-compatible server needs `baseUrl` ' +
          'and no key; a model object (e.g. scriptedModel) needs neither.',
      ),
    );
  });

  it('an empty or blank OPENAI_API_KEY counts as unset, and the message says it is empty', () => {
    for (const value of ['', '  ']) {
      expect(() => resolveModel(options({}), { OPENAI_API_KEY: value })).toThrow(
        /set OPENAI_API_KEY \(it is empty\)/,
      );
    }
  });

  it('a claude id names ANTHROPIC_API_KEY', () => {
    expect(() => resolveModel(options({ model: 'claude-sonnet-4-5' }), {})).toThrow(
      /runs on Anthropic .* set ANTHROPIC_API_KEY \(it is not set\)/,
    );
  });

  it('a key from the option or the variable is enough', () => {
    expect(resolveModel(options({ apiKey: 'sk-1' }), {}).name).toBe('openai:gpt-4o');
    expect(resolveModel(options({}), { OPENAI_API_KEY: 'sk-2' }).name).toBe('openai:gpt-4o');
    expect(resolveModel(options({ model: 'claude-x' }), { ANTHROPIC_API_KEY: 'sk-3' }).name).toBe(
      'anthropic:claude-x',
    );
  });

  it('an OpenAI-compatible baseUrl needs no key', () => {
    const model = resolveModel(options({ baseUrl: 'http://127.0.0.1:11434/v1' }), {});
    expect(model.name).toBe('openai-compatible:gpt-4o');
  });

  it('a model object is used as given', () => {
    const object = { name: 'm', step: async () => ({ text: '', finishReason: 'stop' as const }) };
    expect(resolveModel(options({ model: object }), {})).toBe(object);
  });
});

describe('createAgent with a model id and no key', () => {
  it('rejects with the ConfigError before connecting to anything', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    // The Temporal address given: a listener that counts the connections made to it.
    const temporal = await tcpProbe();
    try {
      const error = await createAgent({
        model: 'gpt-4o',
        advanced: { temporal: { address: temporal.address } },
      }).then(
        () => new Error('createAgent resolved'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/pass the `apiKey` option, or set OPENAI_API_KEY/);
      expect(temporal.connections()).toBe(0);
    } finally {
      await temporal.close();
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});
