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
