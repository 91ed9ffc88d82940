/**
 * One client, thousands of calls: each call runs under a signal of its own, so nothing
 * piles up on the client (issue 13, item 2: a shared signal gained a listener per RPC).
 */
import { getEventListeners } from 'node:events';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { clientCallsOf } from '../../../src/client/client.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    // No hooks, a model that keeps one request: what grows per send is the client's.
    model: scriptedModel((request) => `ok:${String(request.prompt)}`, { keepRequests: 1 }),
    advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('calls') } },
  });
});
afterAll(() => agent?.shutdown());

describe('a client making 2,000 sends', () => {
  it('keeps no listener, no call and no heap per send, and Node warns of no listener leak', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const calls = clientCallsOf(agent.client)!;
      const listeners = () => getEventListeners(calls.signal, 'abort').length;
      const SENDS = 2_000;
      // Sessions of 250 prompts, all on the one client: a single run's Updates slow down
      // past ~1,800 (the server's cost, not the client's), which would only make this slow.
      const PER_SESSION = 250;
      // Measured from the end of the first session, once every code path has run.
      const WARM_UP = PER_SESSION;
      let heapAtWarmUp = 0;
      let listenersAtWarmUp = -1;
      let sent = 0;
      while (sent < SENDS) {
        const session = await agent.createSession();
        for (let i = 0; i < PER_SESSION; i++, sent++) {
          const response = await session.send(`p${sent}`);
          expect(response.text()).toBe(`ok:p${sent}`);
        }
        await session.close();
        if (sent === WARM_UP) {
          heapAtWarmUp = heapAfterGc();
          listenersAtWarmUp = listeners();
        }
      }
      const heapAtEnd = heapAfterGc();
      const growthPerSend = (heapAtEnd - heapAtWarmUp) / (SENDS - WARM_UP);
      console.log(
        `heap ${(heapAtWarmUp / 1e6).toFixed(1)} MB after ${WARM_UP} sends, ` +
          `${(heapAtEnd / 1e6).toFixed(1)} MB after ${SENDS}: ${growthPerSend.toFixed(0)} bytes a send`,
      );
      expect(listenersAtWarmUp).toBe(0);
      expect(listeners()).toBe(0);
      expect(calls.inFlight).toBe(0);
      expect(calls.sessionsWithQueuedSends).toBe(0);
      // With one shared signal: 17 to 27 KB a send (measured). Heap noise here is a few MB
      // either way over the run, so the bound is 5 KB a send (8.75 MB over 1,750 sends).
      expect(growthPerSend).toBeLessThan(5_000);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  }, 600_000);
});
