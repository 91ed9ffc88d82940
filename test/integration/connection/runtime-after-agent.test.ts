/**
 * The process-wide Temporal Runtime (issue 16, item 2), in a test process of its own: by
 * default (no option, no DURABLE_AGENT_TEMPORAL_RUNTIME) the SDK installs none, and an
 * application installs its own once the agent is closed (Temporal shuts an idle runtime down).
 */
import { describe, expect, it } from 'vitest';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { createAgent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

describe('the Temporal Runtime after an agent', () => {
  it("by default the worker runs on Temporal's own runtime, and the application installs its runtime after the agent closed", async () => {
    // The suite's global setup asks for the quiet runtime; this process checks the default.
    delete process.env.DURABLE_AGENT_TEMPORAL_RUNTIME;
    const agent = await createAgent({
      model: scriptedModel(['ok']),
      advanced: {
        temporal: {
          address: temporalAddress(),
          taskQueue: uniqueTaskQueue('rt-after'),
          envConfig: false,
        },
      },
    });
    try {
      const session = await agent.createSession();
      expect((await session.send('hi')).text()).toBe('ok');
      await session.close();
      // Temporal's default runtime (created on first use), not one the SDK installed.
      expect(Runtime.instance().logger).toBeInstanceOf(DefaultLogger);
      expect(() => Runtime.install({})).toThrow(/already been instantiated/);
    } finally {
      await agent.shutdown();
    }
    const entries: LogEntry[] = [];
    const logger = new DefaultLogger('INFO', (entry) => entries.push(entry));
    expect(() => Runtime.install({ logger })).not.toThrow();
    expect(Runtime.instance().logger).toBe(logger);
  });
});
