/**
 * The SDK's Temporal seams (issue 16, item 2): the application's activity interceptors and
 * Temporal plugins given as advanced.temporal.interceptors / plugins reach the worker, its
 * connection and the client, and see the SDK's own activity calls.
 */
import { describe, expect, it } from 'vitest';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';
import { createAgent, HookEvent, type TemporalPlugin } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

/** An activity interceptor factory recording each activity type it runs. */
function recording(into: string[]): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: (input, next) => {
        into.push(ctx.info.activityType);
        return next(input);
      },
    },
  });
}

describe('Temporal interceptors and plugins', () => {
  it("an activity interceptor and a plugin's worker interceptor see the SDK's activity calls; the plugin configures both connections and the client", async () => {
    const byInterceptor: string[] = [];
    const byPlugin: string[] = [];
    const hooks: string[] = [];
    const configured: string[] = [];
    const plugin: TemporalPlugin = {
      name: 'test-plugin',
      configureNativeConnection: (options) => (configured.push('native connection'), options),
      configureConnection: (options) => (configured.push('connection'), options),
      configureClient: (options) => (configured.push('client'), options),
      configureWorker: (options: WorkerOptions) => {
        configured.push(`worker ${options.taskQueue.includes('/cleanup/') ? 'cleanup' : 'main'}`);
        return {
          ...options,
          interceptors: {
            ...options.interceptors,
            activity: [...(options.interceptors?.activity ?? []), recording(byPlugin)],
          },
        };
      },
    };
    const agent = await createAgent({
      model: scriptedModel(['seen']),
      advanced: {
        hooks: {
          [HookEvent.SessionStart]: [
            async () => {
              hooks.push('SessionStart');
              return { action: 'continue' };
            },
          ],
        },
        temporal: {
          address: temporalAddress(),
          taskQueue: uniqueTaskQueue('seams'),
          envConfig: false,
          plugins: [plugin],
          interceptors: { activity: [recording(byInterceptor)] },
        },
      },
    });
    try {
      const session = await agent.createSession();
      expect((await session.send('hi')).text()).toBe('seen');
      await session.close();
    } finally {
      await agent.shutdown();
    }
    expect(hooks).toEqual(['SessionStart']);
    for (const seen of [byInterceptor, byPlugin]) {
      expect(seen).toContain('dispatchHook');
      expect(seen).toContain('modelStep');
    }
    expect(byPlugin).toEqual(byInterceptor);
    // Temporal also hands the plugin to the Client a Worker makes for its activities.
    expect(new Set(configured)).toEqual(
      new Set(['client', 'connection', 'native connection', 'worker cleanup', 'worker main']),
    );
  });
});
