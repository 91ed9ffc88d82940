/**
 * The worker-side conversation cache across a SIGKILL: the workflow state stays the truth,
 * so a new worker's first step (a retry of the step the dead worker held) misses, queries
 * and sees the whole conversation; its later steps read their own copy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { crashAgentOptions } from '../../fixtures/crash-agent.js';
import {
  crashEnv,
  effects,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('the conversation cache', () => {
  it('a worker killed mid-step loses nothing; the next worker misses once, queries, then hits', async () => {
    const env = crashEnv({ recordModel: true, sessionHooksOnly: true });
    const a = await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    expect((await session.send('first')).text()).toBe('echo:first');
    const pending = session.send('model-block second');
    await waitForEffect(env, 'A model model-block second');
    await a.kill();
    openGate(env);
    await startWorkerProcess(env, 'B');
    expect((await pending).text()).toBe('echo:model-block second');
    expect((await session.send('third')).text()).toBe('echo:third');
    const models = effects(env).filter((line) => line.includes(' model '));
    expect(models).toEqual([
      // A's steps read the copy the workflow handed over: no query.
      'A model first messages=1 hits=1 misses=0',
      'A model model-block second messages=3 hits=2 misses=0',
      // B never got a hand-over for the step A held: it queried the whole conversation.
      'B model model-block second messages=3 hits=0 misses=1',
      'B model third messages=5 hits=1 misses=1',
    ]);
    expect(await session.conversation()).toHaveLength(6);
    await session.close();
  }, 120_000);
});
