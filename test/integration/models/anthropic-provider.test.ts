/**
 * The Anthropic request path end to end: a session whose model is `providerModel` with
 * `provider: 'anthropic'`, against a fake Anthropic Messages API on loopback (real HTTP,
 * server-sent events), through the modelStep activity and the session workflow. Checks the
 * requests the provider sends (path, key header, model, tools, the conversation with the
 * tool result) and the answers it parses (text, a tool call).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  ModelError,
  providerModel,
  type Agent,
} from '../../../src/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../fixtures/anthropic-server.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

let server: FakeAnthropic | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
  agent = undefined;
  server = undefined;
});

const looked: string[] = [];
const lookup = defineTool({
  name: 'Lookup',
  description: 'Look a word up',
  kind: 'readonly',
  inputSchema: z.object({ word: z.string() }),
  execute: async ({ word }) => (looked.push(word), `${word} means a small bird`),
});

async function agentOn(fake: FakeAnthropic, apiKey: string) {
  return createAgent({
    model: providerModel({
      model: 'claude-fake-1',
      provider: 'anthropic',
      apiKey,
      baseUrl: fake.baseUrl,
    }),
    tools: [lookup],
    advanced: {
      permission: 'bypass-permissions',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('anthropic') },
    },
  });
}

describe('the Anthropic provider', () => {
  it('sends Messages API requests and parses a tool call, then text; the tool result goes back', async () => {
    server = await startFakeAnthropic(
      [{ toolUses: [{ name: 'Lookup', input: { word: 'wren' } }] }, { text: 'A wren is a bird.' }],
      'sk-ant-test',
    );
    agent = await agentOn(server, 'sk-ant-test');
    const session = await agent.createSession();
    const response = await session.send('What is a wren?');
    expect(response.status).toBe('completed');
    expect(response.text()).toBe('A wren is a bird.');
    expect(response.toolCalls.map((c) => [c.toolName, c.status])).toEqual([['Lookup', 'success']]);
    expect(looked).toEqual(['wren']);

    expect(server.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    const [first, second] = server.requests;
    expect(first!.headers['x-api-key']).toBe('sk-ant-test');
    expect(first!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(first!.headers.authorization).toBeUndefined();
    expect(first!.body).toMatchObject({ model: 'claude-fake-1', stream: true });
    expect(first!.body.max_tokens).toBeGreaterThan(0);
    expect(first!.body.tools).toEqual([
      expect.objectContaining({
        name: 'Lookup',
        description: 'Look a word up',
        input_schema: expect.objectContaining({
          type: 'object',
          properties: { word: { type: 'string' } },
        }),
      }),
    ]);
    expect(first!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is a wren?' }] },
    ]);
    // The second request carries the tool call and its result, paired by the tool_use id.
    expect(second!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is a wren?' }] },
      {
        role: 'assistant',
        content: [
          expect.objectContaining({
            type: 'tool_use',
            id: 'toolu_1',
            name: 'Lookup',
            input: { word: 'wren' },
          }),
        ],
      },
      {
        role: 'user',
        content: [
          expect.objectContaining({
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: 'wren means a small bird',
          }),
        ],
      },
    ]);
    await session.close();
  }, 60_000);

  it('a wrong key: the 401 fails send() with a ModelError naming the provider, not retried', async () => {
    server = await startFakeAnthropic([{ text: 'never' }], 'sk-ant-right');
    agent = await agentOn(server, 'sk-ant-wrong');
    const session = await agent.createSession();
    const error = await session.send('hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ statusCode: 401, provider: 'anthropic', model: 'claude-fake-1' });
    expect(server.requests).toHaveLength(1);
    expect((await session.describe()).status).toBe('open');
    await session.close();
  }, 60_000);
});
