/**
 * The process-wide Temporal Runtime (issue 16, item 2), in a test process of its own: an
 * application that installs its Runtime before createAgent keeps it; the agent's worker runs
 * on it and Temporal's lines go to the application's logger.
 */
import { describe, expect, it } from 'vitest';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { createAgent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

describe('the Temporal Runtime before an agent', () => {
  it("an application's Runtime installed before createAgent stays, and gets the worker's lines", async () => {
    const entries: LogEntry[] = [];
    const logger = new DefaultLogger('INFO', (entry) => entries.push(entry));
    Runtime.install({ logger });
    const taskQueue = uniqueTaskQueue('rt-before');
    const agent = await createAgent({
      model: scriptedModel(['ok']),
      advanced: { temporal: { address: temporalAddress(), taskQueue, envConfig: false } },
    });
    try {
      const session = await agent.createSession();
      expect((await session.send('hi')).text()).toBe('ok');
      await session.close();
      expect(Runtime.instance().logger).toBe(logger);
    } finally {
      await agent.shutdown();
    }
    // Temporal logs a worker's state changes at INFO, with its task queue.
    expect(
      entries.some((e) => e.message === 'Worker state changed' && e.meta?.taskQueue === taskQueue),
    ).toBe(true);
  });
});
