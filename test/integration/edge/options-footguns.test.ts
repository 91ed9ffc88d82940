/** Adversarial: option combinations accepted without a ConfigError. */
import { afterAll, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

it('heartbeatIntervalMs above dispatchHeartbeatTimeoutMs: rejected up front, or a 2.5 s hook still succeeds', async () => {
  const made = await createAgent({
    model: scriptedModel(() => 'ok'),
    advanced: {
      temporal: {
        address: temporalAddress(),
        taskQueue: uniqueTaskQueue('adv-hb'),
        heartbeatIntervalMs: 3_000,
        dispatchHeartbeatTimeoutMs: 1_000,
      },
    },
  }).catch((e: unknown) => e);
  if (made instanceof Error) {
    expect(made).toMatchObject({ code: 'CONFIG_INVALID' });
    return;
  }
  const agent = made as Agent;
  agents.push(agent);
  const session = await agent.createSession({
    hooks: {
      [HookEvent.UserPromptSubmit]: [
        async () => {
          await new Promise((r) => setTimeout(r, 2_500));
          return { action: 'continue' };
        },
      ],
    },
  });
  const outcome = await session.send('x').then(
    (r) => r.status,
    (e: unknown) => e,
  );
  await session.close().catch(() => undefined);
  expect(outcome).toBe('completed');
}, 30_000);
