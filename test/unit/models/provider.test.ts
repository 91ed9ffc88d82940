import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ConversationMessage } from '../../../src/common/conversation.js';
import { ConfigError, ModelError } from '../../../src/common/errors.js';
import type { ModelStepRequest } from '../../../src/models/model.js';
import { ProviderError, providerModel } from '../../../src/models/provider.js';
import { defineTool, type ToolDefinition } from '../../../src/tools/tool.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';

const weather = defineTool({
  name: 'Weather',
  description: 'Current weather of a city',
  kind: 'readonly',
  inputSchema: z.object({ city: z.string(), unit: z.enum(['C', 'F']).default('C') }),
  execute: async ({ city }) => `Sunny in ${city}`,
});

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(script: FakeReply[], apiKey = 'test-key'): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(script, { apiKey });
  servers.push(server);
  return server;
}

function request(
  messages: ConversationMessage[],
  options: { tools?: ToolDefinition[]; signal?: AbortSignal } = {},
): ModelStepRequest {
  return {
    sessionId: 's1',
    requestId: 'r1',
    step: 0,
    promptIndex: 0,
    modelStepIndex: 0,
    signal: options.signal ?? new AbortController().signal,
    messages,
    tools: (options.tools ?? []) as ToolDefinition[],
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('providerModel against an OpenAI-compatible server', () => {
  it('maps a tool call round: tool calls out, tool results in, then text', async () => {
    const server = await serve([
      {
        toolCalls: [
          { name: 'Weather', arguments: { city: 'Paris' } },
          { name: 'Weather', arguments: { city: 'Atlantis', unit: 'F' } },
        ],
      },
      { text: 'Sunny in Paris; Atlantis is not a city.' },
    ]);
    const model = providerModel({
      model: 'gpt-4o-mini',
      baseUrl: server.baseUrl,
      apiKey: 'test-key',
    });
    expect(model.name).toBe('openai-compatible:gpt-4o-mini');

    const prompt: ConversationMessage = { role: 'user', content: 'Weather in Paris and Atlantis?' };
    const first = await model.step(request([prompt], { tools: [weather as ToolDefinition] }));
    expect(first).toEqual({
      text: '',
      toolCalls: [
        { toolUseId: 'call_1', toolName: 'Weather', input: { city: 'Paris' } },
        { toolUseId: 'call_2', toolName: 'Weather', input: { city: 'Atlantis', unit: 'F' } },
      ],
      finishReason: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });

    const conversation: ConversationMessage[] = [
      prompt,
      { role: 'assistant', text: '', toolCalls: first.toolCalls ?? [] },
      {
        role: 'tool',
        results: [
          { toolUseId: 'call_1', toolName: 'Weather', status: 'success', model: 'Sunny, 21°C' },
          { toolUseId: 'call_2', toolName: 'Weather', status: 'error', model: 'Unknown city' },
        ],
      },
    ];
    const second = await model.step(request(conversation, { tools: [weather as ToolDefinition] }));
    expect(second).toEqual({
      text: 'Sunny in Paris; Atlantis is not a city.',
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });

    // One HTTP request per step: no retries, no second step.
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer test-key');
    const [sent1, sent2] = server.chatBodies;
    expect(sent1?.model).toBe('gpt-4o-mini');
    expect(sent1?.messages).toEqual([{ role: 'user', content: 'Weather in Paris and Atlantis?' }]);
    expect(sent1?.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'Weather',
          description: 'Current weather of a city',
          parameters: expect.objectContaining({
            type: 'object',
            properties: {
              city: { type: 'string' },
              unit: { type: 'string', enum: ['C', 'F'], default: 'C' },
            },
            // Input side of the schema: a field with a default is optional.
            required: ['city'],
          }),
        },
      },
    ]);
    expect(sent2?.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Atlantis?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'Weather', arguments: JSON.stringify({ city: 'Paris' }) },
          },
          {
            id: 'call_2',
            type: 'function',
            function: {
              name: 'Weather',
              arguments: JSON.stringify({ city: 'Atlantis', unit: 'F' }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21°C' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Unknown city' },
    ]);
  });

  it('sends image parts and earlier assistant text, and declares no tools when there are none', async () => {
    const server = await serve([{ text: 'A red dot.' }]);
    const model = providerModel({ model: 'gpt-4o', baseUrl: server.baseUrl, apiKey: 'test-key' });
    const output = await model.step(
      request([
        { role: 'user', content: 'hi' },
        { role: 'assistant', text: 'Hello!', toolCalls: [] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' },
            { type: 'image', image: 'https://example.com/dot.jpg' },
          ],
        },
      ]),
    );
    expect(output).toEqual({
      text: 'A red dot.',
      finishReason: 'stop',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });
    const sent = server.chatBodies[0];
    expect(sent?.tools).toBeUndefined();
    expect(sent?.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/dot.jpg' } },
        ],
      },
    ]);
  });

  it('reports the streamed usage, none when the server sends none, and sends maxOutputTokens', async () => {
    const server = await serve([
      { text: 'counted', usage: { prompt: 123, completion: 7 } },
      { text: 'uncounted', usage: null },
    ]);
    const model = providerModel({ model: 'gpt-4o', baseUrl: server.baseUrl, apiKey: 'test-key' });
    const hi: ConversationMessage[] = [{ role: 'user', content: 'hi' }];
    const counted = await model.step({ ...request(hi), maxOutputTokens: 33 });
    expect(counted.usage).toEqual({ inputTokens: 123, outputTokens: 7, totalTokens: 130 });
    expect(server.chatBodies[0]?.stream).toBe(true);
    expect(JSON.stringify(server.chatBodies[0])).toMatch(/"max_(completion_)?tokens":33/);
    const uncounted = await model.step(request(hi));
    expect(uncounted.text).toBe('uncounted');
    expect(uncounted.usage).toBeUndefined();
    expect(JSON.stringify(server.chatBodies[1])).not.toMatch(/max_(completion_)?tokens/);
  });

  it('turns a 429 into a retryable ProviderError, without retrying itself', async () => {
    const server = await serve([
      { status: 429, error: 'Rate limit reached for gpt-4o-mini' },
      { text: 'never sent' },
    ]);
    const model = providerModel({
      model: 'gpt-4o-mini',
      baseUrl: server.baseUrl,
      apiKey: 'test-key',
    });
    const error = await rejection(model.step(request([{ role: 'user', content: 'hi' }])));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({
      code: 'MODEL_ERROR',
      name: 'ProviderError',
      retryable: true,
      statusCode: 429,
      message:
        'openai-compatible gpt-4o-mini: 429 Too Many Requests: Rate limit reached for gpt-4o-mini',
    });
    expect(server.requests).toHaveLength(1);
    expect(server.remaining()).toBe(1);
  });

  it('turns a 500 into a retryable ProviderError', async () => {
    const server = await serve([{ status: 500, error: 'The server had an error' }]);
    const model = providerModel({
      model: 'gpt-4o-mini',
      baseUrl: server.baseUrl,
      apiKey: 'test-key',
    });
    const error = await rejection(model.step(request([{ role: 'user', content: 'hi' }])));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: true, statusCode: 500 });
    expect((error as Error).message).toContain(
      '500 Internal Server Error: The server had an error',
    );
    expect(server.requests).toHaveLength(1);
  });

  it('turns a 401 into a non-retryable ProviderError with a clear message', async () => {
    const server = await serve([{ text: 'never sent' }], 'right-key');
    const model = providerModel({
      model: 'gpt-4o',
      provider: 'openai',
      baseUrl: server.baseUrl,
      apiKey: 'wrong-key',
    });
    expect(model.name).toBe('openai:gpt-4o');
    const error = await rejection(model.step(request([{ role: 'user', content: 'hi' }])));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false, statusCode: 401 });
    expect((error as Error).message).toMatch(
      /^openai gpt-4o: 401 Unauthorized: Incorrect API key provided/,
    );
    expect(server.requests).toHaveLength(1);
    expect(server.remaining()).toBe(1);
  });

  it.each([
    [400, 'Invalid schema for function Weather'],
    [403, 'Project does not have access to model gpt-4o'],
    [404, 'The model `gpt-9` does not exist'],
  ])('turns a %i into a non-retryable ProviderError', async (status, message) => {
    const server = await serve([{ status, error: message }]);
    const model = providerModel({ model: 'gpt-9', baseUrl: server.baseUrl, apiKey: 'test-key' });
    const error = await rejection(model.step(request([{ role: 'user', content: 'hi' }])));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false, statusCode: status });
    expect((error as Error).message).toContain(`: ${status} `);
    expect((error as Error).message).toContain(message);
  });

  it('turns a refused connection into a retryable ProviderError', async () => {
    const server = await startFakeOpenAI([]);
    const baseUrl = server.baseUrl;
    await server.close();
    const model = providerModel({ model: 'gpt-4o-mini', baseUrl, apiKey: 'test-key' });
    const error = await rejection(model.step(request([{ role: 'user', content: 'hi' }])));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: true, statusCode: undefined });
    expect((error as Error).message).toContain(
      `openai-compatible gpt-4o-mini: cannot reach ${baseUrl}`,
    );
    expect((error as Error).message).toContain('ECONNREFUSED');
  });

  it('rejects promptly with the abort reason when the signal aborts', async () => {
    const server = await serve([{ text: 'too late', delayMs: 30_000 }]);
    const model = providerModel({
      model: 'gpt-4o-mini',
      baseUrl: server.baseUrl,
      apiKey: 'test-key',
    });
    const controller = new AbortController();
    const reason = new Error('user aborted');
    const started = Date.now();
    const pending = model.step(
      request([{ role: 'user', content: 'hi' }], { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(reason), 100);
    const error = await rejection(pending);
    expect(error).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects at once, sending nothing, when the signal has already aborted', async () => {
    const server = await serve([{ text: 'never sent' }]);
    const model = providerModel({
      model: 'gpt-4o-mini',
      baseUrl: server.baseUrl,
      apiKey: 'test-key',
    });
    const error = await rejection(
      model.step(request([{ role: 'user', content: 'hi' }], { signal: AbortSignal.abort('stop') })),
    );
    expect(error).toBeInstanceOf(DOMException);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(0);
  });

  it('turns its own timeout into a retryable ProviderError', async () => {
    const server = await serve([{ text: 'too late', delayMs: 30_000 }]);
    const model = providerModel({
      model: 'gpt-4o-mini',
      baseUrl: server.baseUrl,
      apiKey: 'test-key',
      timeoutMs: 200,
    });
    const started = Date.now();
    const error = await rejection(model.step(request([{ role: 'user', content: 'hi' }])));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      retryable: true,
      message: 'openai-compatible gpt-4o-mini: no answer within 200ms (timeoutMs)',
    });
  });
});

describe('providerModel routing and configuration', () => {
  it('routes claude models to Anthropic and others to OpenAI', () => {
    expect(providerModel({ model: 'claude-sonnet-4-5', apiKey: 'k' }).name).toBe(
      'anthropic:claude-sonnet-4-5',
    );
    expect(providerModel({ model: 'gpt-4o', apiKey: 'k' }).name).toBe('openai:gpt-4o');
    expect(providerModel({ model: 'claude-x', baseUrl: 'http://127.0.0.1:1/v1' }).name).toBe(
      'openai-compatible:claude-x',
    );
  });

  it("a failed step of an id taken as an OpenAI model by default says so, naming the URL tried and baseUrl; OpenAI's own ids do not", async () => {
    const server = await startFakeOpenAI([]);
    const baseUrl = server.baseUrl;
    await server.close();
    // Where the AI SDK sends an OpenAI model without `baseUrl`: a closed port here.
    vi.stubEnv('OPENAI_BASE_URL', baseUrl);
    const unknown = await rejection(
      providerModel({ model: 'llama-frobnicate', apiKey: 'k' }).step(
        request([{ role: 'user', content: 'hi' }]),
      ),
    );
    expect(unknown).toBeInstanceOf(ProviderError);
    expect(unknown).toMatchObject({
      retryable: true,
      provider: 'openai',
      model: 'llama-frobnicate',
    });
    expect((unknown as Error).message).toMatch(/^openai llama-frobnicate: cannot reach /);
    expect((unknown as Error).message).toContain(
      ` (model id 'llama-frobnicate' was taken as an OpenAI model and sent to ${baseUrl}/chat/completions: ` +
        "an id without `baseUrl` that does not start with 'claude' goes to OpenAI; for a model " +
        'served elsewhere pass `baseUrl`',
    );
    for (const id of ['gpt-4o-mini', 'o3-mini']) {
      const known = await rejection(
        providerModel({ model: id, apiKey: 'k' }).step(request([{ role: 'user', content: 'hi' }])),
      );
      expect(known).toBeInstanceOf(ProviderError);
      expect((known as Error).message).toMatch(new RegExp(`^openai ${id}: cannot reach `));
      expect((known as Error).message).not.toContain('was taken as an OpenAI model');
    }
  });

  it('fails a step without a key with a non-retryable ProviderError naming the variable', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    vi.stubEnv('OPENAI_API_KEY', '');
    for (const [id, variable] of [
      ['claude-sonnet-4-5', 'ANTHROPIC_API_KEY'],
      ['gpt-4o', 'OPENAI_API_KEY'],
    ] as const) {
      const error = await rejection(
        providerModel({ model: id }).step(request([{ role: 'user', content: 'hi' }])),
      );
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ retryable: false });
      expect((error as Error).message).toContain(variable);
    }
  });

  it('rejects bad options with a ConfigError', () => {
    expect(() => providerModel({ model: '' })).toThrow(ConfigError);
    expect(() => providerModel({ model: 'gpt-4o', timeoutMs: 0 })).toThrow(ConfigError);
    expect(() => providerModel({ model: 'gpt-4o', baseUrl: 'localhost:1234' })).toThrow(
      ConfigError,
    );
  });
});
