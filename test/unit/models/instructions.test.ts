/** ModelStepRequest.instructions: the providers send it as the system message, and only it. */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../../src/common/conversation.js';
import type { ModelStepRequest } from '../../../src/models/model.js';
import { providerModel } from '../../../src/models/provider.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { startFakeAnthropic } from '../../fixtures/anthropic-server.js';
import { startFakeOpenAI } from '../../fixtures/openai-server.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const prompt: ConversationMessage = { role: 'user', content: 'Find the TODOs.' };

function request(instructions?: string): ModelStepRequest {
  return {
    sessionId: 's1',
    requestId: 'r1',
    step: 0,
    promptIndex: 0,
    modelStepIndex: 0,
    signal: new AbortController().signal,
    messages: [prompt],
    tools: [],
    ...(instructions !== undefined ? { instructions } : {}),
  };
}

describe('instructions', () => {
  it('go first as the system message to an OpenAI-compatible server; none without them', async () => {
    const server = await startFakeOpenAI([{ text: 'ok' }, { text: 'ok' }], { apiKey: 'k' });
    closers.push(() => server.close());
    const model = providerModel({ model: 'gpt-4o-mini', baseUrl: server.baseUrl, apiKey: 'k' });
    await model.step(request('You are a researcher. Read, never write.'));
    await model.step(request());
    const [withInstructions, without] = server.chatBodies;
    expect(withInstructions?.messages).toEqual([
      { role: 'system', content: 'You are a researcher. Read, never write.' },
      { role: 'user', content: 'Find the TODOs.' },
    ]);
    expect(without?.messages).toEqual([{ role: 'user', content: 'Find the TODOs.' }]);
  });

  it("go as Anthropic's system field; none without them", async () => {
    const server = await startFakeAnthropic([{ text: 'ok' }, { text: 'ok' }], 'sk-ant');
    closers.push(() => server.close());
    const model = providerModel({
      model: 'claude-fake-1',
      provider: 'anthropic',
      apiKey: 'sk-ant',
      baseUrl: server.baseUrl,
    });
    await model.step(request('You are a researcher.'));
    await model.step(request());
    const [withInstructions, without] = server.requests;
    expect(JSON.stringify(withInstructions?.body.system)).toContain('You are a researcher.');
    expect(withInstructions?.body.messages).toHaveLength(1);
    expect(without?.body.system).toBeUndefined();
  });

  it('are recorded by the scripted model', async () => {
    const model = scriptedModel(['ok']);
    await model.step(request('Be brief.'));
    expect(model.requests[0]?.instructions).toBe('Be brief.');
  });
});
