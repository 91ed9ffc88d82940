/**
 * The process-wide Temporal Runtime (issue 16, item 2; issue 33, item 7), in a test process of
 * its own: by default (no option, no DURABLE_AGENT_TEMPORAL_RUNTIME) the worker installs the
 * quiet runtime, whose lines go to `advanced.logger` and never include the activity-only
 * cleanup worker's "No workflows registered"; an application installs its own runtime once the
 * agent is closed (Temporal shuts an idle runtime down).
 */
import { describe, expect, it } from 'vitest';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { createAgent, type AgentLogger } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

describe('the Temporal Runtime after an agent', () => {
  it('by default the worker installs the quiet runtime (no "No workflows registered"), and the application installs its runtime after the agent closed', async () => {
    // The suite's global setup asks for the quiet runtime; this process checks the default.
    delete process.env.DURABLE_AGENT_TEMPORAL_RUNTIME;
    const lines: string[] = [];
    const record =
      (level: string) =>
      (message: string): void => {
        lines.push(`${level} ${message}`);
      };
    const logger: AgentLogger = {
      debug: record('DEBUG'),
      info: record('INFO'),
      warn: record('WARN'),
      error: record('ERROR'),
    };
    const agent = await createAgent({
      model: scriptedModel(['ok']),
      advanced: {
        // INFO: the workers' state lines reach the logger, so its silence on the warning counts.
        logger,
        logLevel: 'INFO',
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
      // Installed (by the SDK), not Temporal's default one instantiated on first use.
      expect(() => Runtime.install({})).toThrow(/already been installed/);
    } finally {
      await agent.shutdown();
    }
    expect(lines.filter((line) => line.includes('Worker state changed')).length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes('No workflows registered'))).toEqual([]);
    const entries: LogEntry[] = [];
    const appLogger = new DefaultLogger('INFO', (entry) => entries.push(entry));
    expect(() => Runtime.install({ logger: appLogger })).not.toThrow();
    expect(Runtime.instance().logger).toBe(appLogger);
  });
});
