/**
 * Restart the Temporal server itself (dev server with a SQLite file): the session, its
 * hooks' history and its SessionStart marker survive, and the session goes on.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent, HookEvent } from '../../../src/index.js';
import { freePort, startDevServer } from '../../../src/server/dev-server.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

describe('a restart of the Temporal server', () => {
  it('keeps the session: SessionStart ran once, the next prompt and close() work after it', async () => {
    const dbFilename = join(tempDir('db'), 'temporal.sqlite');
    const port = await freePort();
    let server = await startDevServer({ port, dbFilename });
    let starts = 0;
    let ends = 0;
    const agent = await createAgent({
      model: scriptedModel((request) => `reply ${request.promptIndex}`),
      advanced: {
        hooks: {
          [HookEvent.SessionStart]: [
            async () => {
              starts++;
              return { action: 'continue' };
            },
          ],
          [HookEvent.SessionEnd]: [
            async () => {
              ends++;
              return { action: 'continue' };
            },
          ],
        },
        temporal: {
          address: server.address,
          taskQueue: uniqueTaskQueue('restart'),
          shutdownGraceTimeMs: 1_000,
        },
      },
    });
    try {
      const session = await agent.createSession();
      expect((await session.send('before')).text()).toBe('reply 0');
      await server.stop();
      server = await startDevServer({ port, dbFilename });
      // The worker and client reconnect by themselves; the session's state came back from disk.
      expect((await session.send('after')).text()).toBe('reply 1');
      expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: true });
      expect([starts, ends]).toEqual([1, 1]);
    } finally {
      await agent.shutdown();
      await server.stop();
    }
  }, 120_000);
});

describe('a restart of the Temporal server with a shared budget', () => {
  it('keeps what the tenant spent: a session after the restart is refused at the cap', async () => {
    const dbFilename = join(tempDir('db'), 'temporal.sqlite');
    const port = await freePort();
    let server = await startDevServer({ port, dbFilename });
    const tenant = `restart-${Date.now().toString(36)}`;
    const agent = await createAgent({
      model: scriptedModel(() => 'ok'),
      advanced: {
        budgets: { shared: [{ scope: 'tenant', modelCalls: 2 }] },
        temporal: {
          address: server.address,
          taskQueue: uniqueTaskQueue('restart-budget'),
          shutdownGraceTimeMs: 1_000,
        },
      },
    });
    try {
      const first = await agent.createSession({ tenant });
      expect((await first.send('one')).status).toBe('completed');
      await server.stop();
      server = await startDevServer({ port, dbFilename });
      const second = await agent.createSession({ tenant });
      expect((await second.send('two')).status).toBe('completed');
      // Two steps spent, one before the restart: a third is refused.
      const refused = await second.send('three');
      expect(refused.budgetExceeded).toMatchObject({
        budget: 'modelCalls',
        limit: 2,
        spent: 2,
        shared: `tenant:${tenant}`,
      });
      await first.close();
      await second.close();
      expect((await agent.client.sharedBudget(`tenant:${tenant}`))?.spent.modelCalls).toBe(2);
    } finally {
      await agent.shutdown();
      await server.stop();
    }
  }, 120_000);
});
