import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type HookInput } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

describe('a session on a real Temporal server', () => {
  let agent: Agent;
  const calls: HookInput[] = [];
  const model = scriptedModel(['hello back']);

  beforeAll(async () => {
    agent = await createAgent({
      model,
      advanced: {
        hooks: {
          [HookEvent.SessionStart]: [
            async (input) => {
              calls.push(input);
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue() },
      },
    });
  });
  afterAll(() => agent?.shutdown());

  it('dispatches SessionStart once to the callback registered in the worker, and the history shows the activity', async () => {
    const session = await agent.createSession();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      event: 'SessionStart',
      sessionId: session.id,
      isResume: false,
    });
    expect(calls[0]!.abortSignal).toBeInstanceOf(AbortSignal);

    const response = await session.send('hi');
    expect(response.status).toBe('completed');
    expect(response.text()).toBe('hello back');
    expect(model.prompts).toEqual(['hi']);
    await session.close();

    const client = await rawClient();
    const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name): name is string => Boolean(name));
    expect(scheduled).toEqual(['dispatchHook', 'modelStep']);
    await client.connection.close();
  });
});
