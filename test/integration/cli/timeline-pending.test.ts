/** A dispatch still running shows on the timeline as `pending`, so readers never take its provisional outcome for the decision. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { gate, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const held = gate();
let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model: scriptedModel(() => 'ok'),
    tools: [],
    advanced: {
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            await held.opened;
            return { action: 'abort', reason: 'held, then refused' };
          },
        ],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('pending') },
    },
  });
});
afterAll(() => agent?.shutdown());

it('marks the running dispatch pending, and drops the mark with its real outcome', async () => {
  const session = await agent.createSession();
  const sending = session.send('hello').catch((e: unknown) => e);
  await waitFor(async () => (await session.timeline()).length === 1, 10_000, 'the dispatch');
  expect((await session.timeline())[0]).toMatchObject({
    event: HookEvent.UserPromptSubmit,
    pending: true,
  });
  held.open();
  expect(await sending).toMatchObject({ code: 'HOOK_ABORTED' });
  const [entry] = await session.timeline();
  expect(entry).toMatchObject({ outcome: 'abort', reason: 'held, then refused' });
  expect(entry).not.toHaveProperty('pending');
  await session.close();
});
