/** A malformed prompt, from send() and from a UserPromptSubmit callback: refused, and the session goes on. */
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { Updates } from '../../../src/common/messages.js';

const agents: Agent[] = [];
afterAll(async () => {
  for (const a of agents) await a.shutdown();
});
describe('a malformed prompt', () => {
  it('send() refuses a prompt that is not a string or parts at once, and the session goes on', async () => {
    const agent = await createAgent({
      model: scriptedModel((request) => `reply ${request.modelStepIndex}`),
      advanced: {
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-prompt') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    for (const [bad, why] of [
      [
        undefined,
        /^send\(\): prompt must be a string or an array of text and image parts, got undefined$/,
      ],
      [42, /got number 42$/],
      [{ text: 'hi' }, /prompt must be a string or an array/],
      [[{ type: 'text', text: 7 }], /^send\(\): prompt\[0\]\.text must be a string, got number 7$/],
      [[{ type: 'audio' }], /prompt\[0\]\.type must be 'text' or 'image', got 'audio'/],
    ] as const) {
      await expect(session.send(bad as never)).rejects.toThrow(why);
    }
    // Past the client's check (another client, an old one): the workflow's validator refuses it.
    const raw = await rawClient();
    try {
      await expect(
        raw.workflow
          .getHandle(session.workflowId)
          .executeUpdate(Updates.send, { args: [{ requestId: 'raw-bad', prompt: 42 } as never] }),
      ).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/^send: prompt must be a string/) },
      });
    } finally {
      await raw.connection.close();
    }
    // Nothing was recorded: the session answers the next prompt as its first.
    expect((await session.send('hello')).text()).toBe('reply 0');
    await session.close();
  });

  it("a UserPromptSubmit callback's userPrompt of another type is a malformed output, not ignored", async () => {
    const seen: unknown[] = [];
    const agent = await createAgent({
      model: scriptedModel((request) => (seen.push(request.messages.at(-1)), 'ok')),
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async () => ({ action: 'continue' as const, modifiedInput: { userPrompt: 42 } }),
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-prompt-hook') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    await expect(session.send('original prompt')).rejects.toMatchObject({
      code: 'HOOK_OUTPUT_INVALID',
      message: expect.stringContaining(
        'modifiedInput.userPrompt must be a string (the new prompt text), got number 42',
      ),
    });
    expect(seen).toEqual([]);
    await session.close();
  });
});
