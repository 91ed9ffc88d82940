/** A PreToolUse callback past hookTimeoutMs: its call fails and the step stays fail-closed until it settles. */
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel, scriptedTool, toolCall, toolCalls } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const agents: Agent[] = [];
afterAll(async () => {
  for (const a of agents) await a.shutdown();
});
const Echo = scriptedTool({
  name: 'Echo',
  kind: 'write',
  results: (input) => `echo ${String(input.word)}`,
});
/** The words that reached the tool, in order. */
const executed = () => Echo.calls.map((c) => c.input.word);
describe('PreToolUse past hookTimeoutMs', () => {
  it('fails its call and the rest of the step closed until the callback settles; then tools run again', async () => {
    let calls = 0;
    let release!: () => void;
    const released = new Promise<void>((res) => (release = res));
    const agent = await createAgent({
      model: scriptedModel([
        toolCalls(
          ['Echo', { word: 'one' }],
          ['Echo', { word: 'two' }],
          ['Echo', { word: 'three' }],
        ),
        'after',
        toolCall('Echo', { word: 'four' }),
        'second prompt',
      ]),
      tools: [Echo],
      advanced: {
        hookTimeoutMs: 300,
        permission: 'bypass-permissions',
        hooks: {
          [HookEvent.PreToolUse]: [
            async () => {
              // The first callback ignores its signal and outlives its budget until released.
              if (calls++ === 0) await released;
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-misc') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    try {
      const resp = await session.send('go');
      expect(resp.status).toBe('completed');
      expect(resp.text()).toBe('after');
      const results = (await session.conversation()).flatMap((m) =>
        m.role === 'tool' ? m.results : [],
      );
      expect(results.map((x) => [x.status, x.model])).toEqual([
        ['error', 'PreToolUse hook failed: Hook PreToolUse exceeded 300ms'],
        ['error', expect.stringMatching(/still cleaning up after being cancelled/)],
        ['error', expect.stringMatching(/still cleaning up after being cancelled/)],
      ]);
      expect(executed()).toEqual([]);
      // While the callback is still running the session stays fail-closed: close() refuses.
      await expect(session.close()).rejects.toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });
    } finally {
      release();
    }
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      10_000,
      'the late callback to settle',
    );
    const again = await session.send('again');
    expect(again.text()).toBe('second prompt');
    expect(again.toolCalls.map((c) => c.status)).toEqual(['success']);
    expect(executed()).toEqual(['four']);
    expect((await session.close()).closedNow).toBe(true);
  }, 30_000);
});
