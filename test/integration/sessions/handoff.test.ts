/**
 * `session.handoff({ taskQueue })` on a real server moves the session's model steps and
 * tool runs, not only its hooks (crash-recovery.test.ts checks those), to the workers of
 * the other task queue; the conversation goes with it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createAgent, defineTool, type Agent } from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

/** Which agent's model ran each step, with the user prompts its request carried. */
const modelRuns: Array<{ by: string; prompts: string[] }> = [];
/** Which agent's tool ran each call. */
const toolRuns: string[] = [];

/** One definition, two workers: each labels what it ran. */
function options(label: string, taskQueue: string) {
  return {
    model: scriptedModel((request) => {
      const prompts = request.messages.flatMap((m) =>
        m.role === 'user' && typeof m.content === 'string' ? [m.content] : [],
      );
      modelRuns.push({ by: label, prompts });
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return `ran on ${last.results[0]?.model}`;
      return toolCall('Where', {});
    }),
    tools: [
      defineTool({
        name: 'Where',
        description: 'Say which worker ran it',
        kind: 'readonly',
        inputSchema: z.object({}),
        execute: async () => (toolRuns.push(label), label),
      }),
    ],
    advanced: {
      permission: 'bypass-permissions' as const,
      temporal: { address: temporalAddress(), taskQueue },
    },
  };
}

const agents: Agent[] = [];
afterAll(async () => {
  for (const agent of agents) await agent.shutdown();
});

describe('handoff', () => {
  it('moves model steps and tool runs to the other queue; the model there sees the conversation', async () => {
    const queueA = uniqueTaskQueue('handoff-a');
    const queueB = `${queueA}-b`;
    const a = await createAgent(options('A', queueA));
    agents.push(a);
    const b = await createAgent(options('B', queueB));
    agents.push(b);
    const session = await a.createSession();

    expect((await session.send('first')).text()).toBe('ran on A');
    expect(toolRuns).toEqual(['A']);
    expect(modelRuns.map((r) => r.by)).toEqual(['A', 'A']);

    // createAgent resolves before its worker's first poll reaches the server; handoff
    // refuses a queue nobody polls yet.
    await waitFor(
      () =>
        session.handoff({ taskQueue: queueB }).then(
          (d) => d.taskQueue === queueB,
          (e: unknown) => {
            if (e instanceof ConfigError) return false;
            throw e;
          },
        ),
      15_000,
      'a worker polling the other queue',
    );
    expect((await session.describe()).taskQueue).toBe(queueB);

    const response = await session.send('second');
    expect(response.text()).toBe('ran on B');
    expect(response.toolCalls.map((c) => [c.toolName, c.status])).toEqual([['Where', 'success']]);
    expect(toolRuns).toEqual(['A', 'B']);
    expect(modelRuns.map((r) => r.by)).toEqual(['A', 'A', 'B', 'B']);
    // B's first step read the whole conversation (its cache had none of it).
    expect(modelRuns[2]!.prompts).toEqual(['first', 'second']);
    await session.close();
  }, 60_000);
});
