/** Adversarial: option combinations that must be refused, or must work, as documented. */
import { afterAll, expect, it } from 'vitest';
import { ConfigError, createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

it('heartbeatIntervalMs above half of dispatchHeartbeatTimeoutMs: createAgent refuses it with a ConfigError naming both', async () => {
  const error = await createAgent({
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
  expect(error).toBeInstanceOf(ConfigError);
  expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
  expect((error as Error).message).toContain(
    'advanced.temporal.heartbeatIntervalMs (3000) must be at most half of ' +
      'advanced.temporal.dispatchHeartbeatTimeoutMs (1000)',
  );
});

it('a workspace root that does not exist: createAgent refuses it with a ConfigError naming workspaceRoots and the root', async () => {
  const error = await createAgent({
    model: scriptedModel(() => 'ok'),
    workspaceRoots: ['/nonexistent/workspace-root'],
    advanced: {
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-root') },
    },
  }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
  expect((error as Error).message).toMatch(
    /^Invalid agent options: workspaceRoots: Workspace root '\/nonexistent\/workspace-root' cannot be resolved: ENOENT/,
  );
});

it('heartbeatIntervalMs at exactly half of dispatchHeartbeatTimeoutMs: a hook that outlives the heartbeat timeout still succeeds', async () => {
  const agent = await createAgent({
    model: scriptedModel(() => 'ok'),
    advanced: {
      temporal: {
        address: temporalAddress(),
        taskQueue: uniqueTaskQueue('adv-hb-half'),
        heartbeatIntervalMs: 1_000,
        dispatchHeartbeatTimeoutMs: 2_000,
      },
    },
  });
  agents.push(agent);
  const session = await agent.createSession({
    hooks: {
      [HookEvent.UserPromptSubmit]: [
        async () => {
          // Longer than the heartbeat timeout: only its heartbeats keep the dispatch alive.
          await new Promise((r) => setTimeout(r, 3_000));
          return { action: 'continue' };
        },
      ],
    },
  });
  expect((await session.send('x')).status).toBe('completed');
  expect((await session.timeline()).map((e) => e.outcome)).toEqual(['continue']);
  await session.close();
}, 30_000);
