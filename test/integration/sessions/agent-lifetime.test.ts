/**
 * README: with no Temporal address, `createAgent` starts an embedded dev server and stops it
 * with the agent; worker shutdown waits (up to `shutdownGraceTimeMs`, by default the hook
 * budget) for in-flight hooks, so a deploy does not fail them.
 */
import { createConnection } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentWorker,
  HookEvent,
  type AgentOptions,
  type HookCallback,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { gate, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { isAlive } from '../../unit/tools/fixtures.js';

/** Whether something accepts TCP connections at `address` (`host:port`). */
function accepts(address: string): Promise<boolean> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), address.split(':').pop()];
  return new Promise((resolve) => {
    const socket = createConnection({ host, port: Number(port) });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('the embedded server', () => {
  it('with no Temporal address, createAgent starts its own dev server, runs on it, and shutdown() stops it', async () => {
    const shared = process.env.TEMPORAL_ADDRESS;
    delete process.env.TEMPORAL_ADDRESS;
    let agent;
    try {
      agent = await createAgent({
        model: scriptedModel(() => 'embedded'),
        advanced: { temporal: { taskQueue: uniqueTaskQueue('embedded') } },
      });
    } finally {
      process.env.TEMPORAL_ADDRESS = shared;
    }
    const server = agent.embeddedServer;
    try {
      expect(server).toBeDefined();
      expect(agent.address).toBe(server!.address);
      expect(agent.address).not.toBe(shared);
      expect(server!.pid).toBeGreaterThan(0);
      expect(isAlive(server!.pid)).toBe(true);
      expect(await accepts(agent.address)).toBe(true);
      const session = await agent.createSession();
      expect((await session.send('hi')).text()).toBe('embedded');
      await session.close();
    } finally {
      await agent.shutdown();
    }
    await waitFor(() => !isAlive(server!.pid), 10_000, 'the embedded server process to exit');
    expect(await accepts(server!.address)).toBe(false);
  }, 120_000);
});

describe('worker shutdown', () => {
  it('a hook in flight when worker.shutdown() is called completes, and its result is used', async () => {
    const entered = gate();
    const release = gate();
    let abortedAtEnd: boolean | undefined;
    const rewrite: HookCallback = async (input) => {
      if (input.userPrompt !== 'in flight') return { action: 'continue' };
      entered.open();
      await release.opened;
      abortedAtEnd = input.abortSignal?.aborted;
      return { action: 'continue', modifiedInput: { userPrompt: 'rewritten in flight' } };
    };
    const options: AgentOptions = {
      model: scriptedModel((request) => `echo:${String(request.prompt)}`),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [rewrite] },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('grace') },
      },
    };
    const first = await createAgent(options);
    let second;
    try {
      const session = await first.createSession();
      const reply = session.send('in flight');
      await entered.opened;
      let stopped = false;
      const stopping = first.worker.shutdown().then(() => (stopped = true));
      // Another worker of the queue carries the session on once the first is gone.
      second = await createAgentWorker(options);
      // The first worker's shutdown is still waiting for the hook.
      expect(stopped).toBe(false);
      release.open();
      await stopping;
      const response = await reply;
      // The hook's result was used, and it was not cancelled on the way.
      expect(abortedAtEnd).toBe(false);
      expect(response.status).toBe('completed');
      expect(response.text()).toBe('echo:rewritten in flight');
      expect((await session.timeline()).map((e) => [e.event, e.outcome])).toEqual([
        ['UserPromptSubmit', 'continue'],
      ]);
      await session.close();
    } finally {
      await second?.shutdown();
      await first.shutdown();
    }
  }, 60_000);
});
