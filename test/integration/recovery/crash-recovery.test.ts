/**
 * Real worker processes, killed with SIGKILL at the worst moments. Side effects are counted
 * from what the callbacks wrote, not from log lines.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, HookError, type AgentClient } from '../../../src/index.js';
import { crashAgentOptions, type CrashAgentEnv } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  killAll,
  openGate,
  runClientProcess,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import { pendingAsk, waitFor } from '../../helpers/common.js';

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function clientFor(env: CrashAgentEnv): Promise<AgentClient> {
  const client = await createAgentClient(crashAgentOptions(env));
  clients.push(client);
  return client;
}

describe('a worker killed with SIGKILL', () => {
  it('between prompts: the session goes on on a new worker; SessionStart and SessionEnd ran once', async () => {
    const env = crashEnv();
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    expect((await session.send('first')).text()).toBe('echo:first');
    await a.kill();
    await startWorkerProcess(env, 'B');
    expect((await session.send('second')).text()).toBe('echo:second');
    await session.close();
    expect(count(env, 'SessionStart')).toBe(1);
    expect(count(env, 'UserPromptSubmit:end first')).toBe(1);
    expect(count(env, 'UserPromptSubmit:end second')).toBe(1);
    expect(count(env, 'B UserPromptSubmit:start second')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  });

  it('during a callback: the dispatch fails as worker lost, is never re-run, and the session stays usable', async () => {
    const env = crashEnv();
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const pending = session.send('block me').catch((e: unknown) => e);
    await waitForEffect(env, 'A UserPromptSubmit:start block me');
    await a.kill();
    await startWorkerProcess(env, 'B');
    const error = await pending;
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({ code: 'HOOK_WORKER_LOST', event: 'UserPromptSubmit' });
    expect((await session.send('after')).text()).toBe('echo:after');
    expect(count(env, 'UserPromptSubmit:start block me')).toBe(1);
    const timeline = await session.timeline();
    expect(timeline.filter((e) => e.event === 'UserPromptSubmit').map((e) => e.outcome)).toEqual([
      'worker_lost',
      'continue',
    ]);
    await session.close();
    expect(count(env, 'SessionStart')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  });

  it('during SessionEnd: close() rejects, the next close() closes without calling SessionEnd again', async () => {
    const env = crashEnv({ blockSessionEnd: true });
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const closing = session.close().catch((e: unknown) => e);
    await waitForEffect(env, 'A SessionEnd:start other');
    await a.kill();
    await startWorkerProcess(env, 'B');
    expect(await closing).toMatchObject({ code: 'HOOK_WORKER_LOST', event: 'SessionEnd' });
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
    expect(count(env, 'SessionEnd:start')).toBe(1);
    expect(count(env, 'SessionStart')).toBe(1);
  });
});

describe('a permission request waiting for a person', () => {
  it('survives a worker kill: approved on the new worker, the tool runs once with the approved input', async () => {
    const env = crashEnv();
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const pending = session.send('record:model-value');
    const requestId = await pendingAsk(session, 15_000, 'the ask');
    await a.kill();
    await startWorkerProcess(env, 'B');
    await session.approve(requestId, { updatedInput: { value: 'approved-value' } });
    const response = await pending;
    expect(response.text()).toBe('done:success');
    expect(count(env, 'Record')).toBe(1);
    expect(count(env, 'B Record approved-value')).toBe(1);
    await session.close();
  });

  it('denied after a worker restart: the tool never runs', async () => {
    const env = crashEnv();
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const pending = session.send('record:never');
    const requestId = await pendingAsk(session, 15_000, 'the ask');
    await a.kill();
    await startWorkerProcess(env, 'B');
    await session.deny(requestId, { message: 'no' });
    expect((await pending).text()).toBe('done:error');
    expect(count(env, 'Record')).toBe(0);
    await session.close();
  });
});

describe('fail-closed across processes', () => {
  it('releases the session when the worker holding a stuck callback dies', async () => {
    const env = crashEnv({ hookTimeoutMs: 300 });
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    expect(await session.send('block forever').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    expect(await session.send('refused').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_CLEANUP_PENDING',
    });
    await a.kill();
    await startWorkerProcess(env, 'B');
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      20_000,
      'release after worker death',
    );
    expect((await session.send('free again')).text()).toBe('echo:free again');
    expect((await session.timeline()).find((e) => e.outcome === 'timeout')).toMatchObject({
      cleanup: 'lost',
    });
    await session.close();
  });

  it('holds with two workers on one task queue: neither runs a dispatch while the callback held by one cleans up; once it settles, the other runs the next', async () => {
    const env = crashEnv({ hookTimeoutMs: 300 });
    // A alone polls, so A runs the callback that gets stuck.
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    expect(await session.send('block a while').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    expect(count(env, 'A UserPromptSubmit:start block a while')).toBe(1);
    // B joins the queue: the hold lives in the workflow, so no worker runs the next dispatch.
    await startWorkerProcess(env, 'B');
    for (let i = 0; i < 4; i++) {
      expect(await session.send(`refused ${i}`).catch((e: unknown) => e)).toMatchObject({
        code: 'HOOK_CLEANUP_PENDING',
      });
    }
    expect(count(env, 'UserPromptSubmit:start refused')).toBe(0);
    openGate(env);
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      10_000,
      'the callback to settle',
    );
    expect(count(env, 'A UserPromptSubmit:end block a while')).toBe(1);
    expect((await session.timeline()).find((e) => e.outcome === 'timeout')).toMatchObject({
      cleanup: 'settled',
    });
    // A leaves the queue (a graceful stop): the next dispatch can only run on B, which held
    // nothing and now runs it.
    const exited = new Promise((resolve) => a.child.once('exit', resolve));
    a.child.kill('SIGTERM');
    await exited;
    expect((await session.send('open')).text()).toBe('echo:open');
    expect(count(env, 'B UserPromptSubmit:start open')).toBe(1);
    expect(count(env, 'A UserPromptSubmit:start open')).toBe(0);
    await session.close();
  });
});

describe('another process', () => {
  it('closes a session it did not create: SessionEnd runs once', async () => {
    const env = crashEnv();
    await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const result = await runClientProcess(env, ['close', session.id]);
    expect(result).toEqual({ ok: true, result: { closedNow: true, sessionEndRan: true } });
    expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
    expect(count(env, 'SessionEnd:end')).toBe(1);
  });

  it("aborts a prompt; the callback's signal carries an Error with the caller's message", async () => {
    const env = crashEnv();
    await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const pending = session.send('wait-abort');
    await waitForEffect(env, 'UserPromptSubmit:start wait-abort');
    const result = await runClientProcess(env, ['abort', session.id, 'stop from the other side']);
    expect(result).toEqual({ ok: true, result: true });
    const response = await pending;
    expect(response.status).toBe('aborted');
    expect((response.abortReason as Error).message).toBe('stop from the other side');
    await waitForEffect(env, 'UserPromptSubmit:aborted Error:stop from the other side');
    await session.close();
  });

  it('hands a live session off to the workers of another task queue', async () => {
    const env = crashEnv();
    await startWorkerProcess(env, 'A');
    const other = { ...env, taskQueue: `${env.taskQueue}-other` };
    await startWorkerProcess(other, 'B');
    const client = await clientFor(env);
    const session = await client.createSession();
    await session.send('before');
    expect((await session.handoff({ taskQueue: other.taskQueue })).taskQueue).toBe(other.taskQueue);
    await session.send('after');
    expect(count(env, 'A UserPromptSubmit:start before')).toBe(1);
    expect(count(env, 'B UserPromptSubmit:start after')).toBe(1);
    await session.close();
    expect(count(env, 'B SessionEnd:end')).toBe(1);
  });
});
