/**
 * What one process (`createAgent`: worker and client) holds of a session once it closed:
 * nothing per session (issue 31, item 4). `bench/memory.ts` measures the heap over
 * thousands of sessions; these check each holder it found, on a real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { clientCallsOf } from '../../../src/client/client.js';
import { cachedWorkflowsOf } from '../../../src/worker/worker.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model: scriptedModel((request) => `ok:${String(request.prompt)}`, { keepRequests: 0 }),
    advanced: {
      hooks: { UserPromptSubmit: [async () => ({ action: 'continue' as const })] },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('closed-memory') },
    },
  });
});
afterAll(() => agent?.shutdown());

describe('a process after its sessions closed', () => {
  it('drops each closed session: its conversation copy, cached workflow, hooks and calls', async () => {
    const cache = agent.worker.conversationCache;
    const SESSIONS = 5;
    for (let n = 0; n < SESSIONS; n++) {
      const session = await agent.createSession({
        hooks: { UserPromptSubmit: [async () => ({ action: 'continue' as const })] },
      });
      for (let i = 0; i < 2; i++) {
        expect((await session.send(`p${n}.${i}`)).text()).toBe(`ok:p${n}.${i}`);
      }
      // Open, the session's copy is held (what the model steps read without a query).
      expect(cache.size).toBe(1);
      expect(cachedWorkflowsOf(agent.worker)).toBeGreaterThanOrEqual(1);
      await session.close();
      // The workflow's last task tells the worker (a sink), after close() was answered.
      await waitFor(() => cache.size === 0, 30_000, `session ${n}'s copy to go`);
    }
    expect(cache.stats.hits).toBeGreaterThanOrEqual(SESSIONS * 2);
    expect(agent.worker.registry.sessionsHeld).toBe(0);
    // Temporal's workflow cache evicts a run once it completed (open ones stay, bounded).
    await waitFor(() => cachedWorkflowsOf(agent.worker) === 0, 30_000, 'cached workflows to go');
    const calls = clientCallsOf(agent.client)!;
    expect(calls.inFlight).toBe(0);
    expect(calls.sessionsWithQueuedSends).toBe(0);
  }, 120_000);
});
