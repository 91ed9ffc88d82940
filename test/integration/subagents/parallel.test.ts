/**
 * Consecutive `Task` calls of one model step run side by side: each sub-agent's PreToolUse
 * waits until the other's has begun (run one after the other, the first would wait in
 * vain), and the parent reads their answers in call order. A real Temporal server; a
 * scripted model.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel, toolCall, toolCalls } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

/** The sub-agents whose PreToolUse has begun. */
const begun = new Set<string>();
let agent: Agent;

beforeAll(async () => {
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1);
    const path = request.agentPath ?? 'main';
    if (path !== 'main') {
      return last?.role === 'tool'
        ? `${path}: ${String(last.results[0]?.model)}`
        : toolCall('Bash', { command: 'ls' });
    }
    if (last?.role === 'tool') return last.results.map((r) => r.model).join(' | ');
    return toolCalls(
      ['Task', { description: 'a', prompt: 'List a', subagent_type: 'alpha' }],
      ['Task', { description: 'b', prompt: 'List b', subagent_type: 'beta' }],
    );
  });
  agent = await createAgent({
    name: 'subagents-parallel',
    model,
    advanced: {
      hooks: {
        // A sub-agent's Bash call is skipped once the other sub-agent's call has begun too.
        [HookEvent.PreToolUse]: [
          async (input) => {
            if (input.agentPath === undefined) return { action: 'continue' };
            begun.add(input.agentPath);
            const deadline = Date.now() + 15_000;
            while (begun.size < 2 && Date.now() < deadline) await delay(20);
            // Beta answers first: the results still come back in call order.
            if (input.agentPath === 'main/alpha') await delay(300);
            return { action: 'skip', reason: `saw ${begun.size} running` };
          },
        ],
      },
      permission: 'bypass-permissions',
      subagents: {
        agents: {
          alpha: { description: 'Lists a', prompt: 'You list.', tools: ['Bash'] },
          beta: { description: 'Lists b', prompt: 'You list.', tools: ['Bash'] },
        },
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('subagents-parallel') },
    },
  });
});

afterAll(async () => {
  await agent?.shutdown();
});

describe('parallel Task calls', () => {
  it('two sub-agents run at once; the parent reads their answers in call order', async () => {
    const session = await agent.createSession();
    const response = await session.send('go');
    expect(response.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Task', 'success'],
      ['Task', 'success'],
    ]);
    expect(response.text()).toBe('main/alpha: saw 2 running | main/beta: saw 2 running');
    await session.close();
  }, 60_000);
});
