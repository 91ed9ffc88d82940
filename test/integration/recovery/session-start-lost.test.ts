/**
 * A session that never opened (its SessionStart failed) fails creation with the documented
 * SESSION_START_FAILED, and its id is free again (issue 13, item 8). A session that opened
 * and closed keeps its id.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentClient,
  HookError,
  HookEvent,
  SessionClosedError,
  type Agent,
  type AgentClient,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { crashAgentOptions } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import {
  gate,
  rawClient,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
} from '../../helpers/common.js';

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('a worker SIGKILLed inside the SessionStart callback', () => {
  it('createSession rejects with SESSION_START_FAILED (cause: worker lost), and the same id then creates a working session', async () => {
    const env = crashEnv({ blockSessionStart: true });
    const a = await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const sessionId = `start-lost-${randomUUID()}`;
    const creating = client.createSession({ sessionId }).catch((e: unknown) => e);
    await waitForEffect(env, `A SessionStart:waiting ${sessionId}`);
    await a.kill();
    // A worker for the workflow task that notices the lost dispatch; the gate lets its
    // SessionStart through.
    openGate(env);
    await startWorkerProcess(env, 'B');
    const error = await creating;
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({ code: 'SESSION_START_FAILED', event: 'SessionStart' });
    expect((error as HookError).message).toMatch(/^SessionStart failed: /);
    const cause = (error as HookError).cause;
    expect(cause).toBeInstanceOf(HookError);
    expect(cause).toMatchObject({ code: 'HOOK_WORKER_LOST', event: 'SessionStart' });

    const session = await client.createSession({ sessionId });
    expect(session.id).toBe(sessionId);
    expect((await session.send('hello')).text()).toBe('echo:hello');
    expect((await session.timeline()).map((e) => [e.event, e.outcome])).toEqual([
      ['SessionStart', 'continue'],
      ['UserPromptSubmit', 'continue'],
      ['TaskCompleted', 'continue'],
    ]);
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: true });
    // The callback A held started once and never finished; B's ran once, to the end.
    expect(count(env, `A SessionStart:waiting ${sessionId}`)).toBe(1);
    expect(count(env, `A SessionStart ${sessionId}`)).toBe(0);
    expect(count(env, `B SessionStart ${sessionId}`)).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  }, 60_000);
});

describe('session ids after a start that failed', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await createAgent({
      model: scriptedModel((request) => `echo:${String(request.prompt)}`),
      advanced: {
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('start-again') },
      },
    });
  });
  afterAll(() => agent?.shutdown());

  it('a session whose SessionStart aborted can be created again with the same id; SessionStart runs again', async () => {
    const sessionId = `refused-once-${randomUUID()}`;
    const starts: string[] = [];
    let refuse = true;
    const hooks = {
      [HookEvent.SessionStart]: [
        async () => {
          starts.push(refuse ? 'refused' : 'allowed');
          return refuse
            ? { action: 'abort' as const, reason: 'quota exceeded' }
            : { action: 'continue' as const };
        },
      ],
    };
    const error = await agent.createSession({ sessionId, hooks }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SESSION_START_FAILED', message: 'quota exceeded' });
    refuse = false;
    const session = await agent.createSession({ sessionId, hooks });
    expect((await session.send('again')).text()).toBe('echo:again');
    expect(starts).toEqual(['refused', 'allowed']);
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
  }, 30_000);

  it('a SessionStart that timed out holds its id until the callback settles: no second SessionStart runs beside it', async () => {
    const sessionId = `timed-out-${randomUUID()}`;
    const hold = gate();
    let running = 0;
    let most = 0;
    let starts = 0;
    const hooks = {
      [HookEvent.SessionStart]: [
        async () => {
          starts++;
          running++;
          most = Math.max(most, running);
          if (starts === 1) await hold.opened; // ignores its signal, outlives its budget
          running--;
          return { action: 'continue' as const };
        },
      ],
    };
    const first = await agent
      .createSession({ sessionId, hooks, hookTimeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'SESSION_START_FAILED' });
    // While the first callback still runs, the id is held: creation fails again and starts nothing.
    const second = await agent.createSession({ sessionId, hooks }).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: 'SESSION_START_FAILED' });
    expect(starts).toBe(1);
    hold.open();
    // Once it settled, the id is free: a new run starts the session afresh.
    let session: Awaited<ReturnType<Agent['createSession']>> | undefined;
    await waitFor(
      async () => {
        session = await agent.createSession({ sessionId, hooks }).catch(() => undefined);
        return session !== undefined;
      },
      20_000,
      'the id to be free once the timed-out SessionStart settled',
    );
    expect(starts).toBe(2);
    expect(most).toBe(1);
    await session!.close();
  }, 40_000);

  it('a SessionStart callback that throws fails creation with SESSION_START_FAILED carrying the thrown error', async () => {
    const sessionId = `threw-${randomUUID()}`;
    const error = await agent
      .createSession({
        sessionId,
        hooks: {
          [HookEvent.SessionStart]: [
            async () => ({ action: 'continue' }),
            async () => {
              throw new RangeError('tenant lookup failed');
            },
          ],
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({
      code: 'SESSION_START_FAILED',
      event: 'SessionStart',
      callbackIndex: 1,
      message: 'SessionStart failed: tenant lookup failed',
    });
    expect((error as HookError).cause).toMatchObject({
      name: 'RangeError',
      message: 'tenant lookup failed',
    });
    const session = await agent.createSession({ sessionId });
    expect((await session.send('fine')).status).toBe('completed');
    await session.close();
  }, 30_000);

  it('a session that opened and closed keeps its id: createSession refuses it with SessionClosedError', async () => {
    const sessionId = `opened-${randomUUID()}`;
    const session = await agent.createSession({ sessionId });
    await session.close();
    await expect(agent.createSession({ sessionId })).rejects.toBeInstanceOf(SessionClosedError);
  }, 30_000);

  it('a terminated session keeps its id: createSession refuses it with SessionClosedError', async () => {
    const sessionId = `terminated-${randomUUID()}`;
    const session = await agent.createSession({ sessionId });
    const client = await rawClient();
    try {
      await client.workflow.getHandle(session.workflowId).terminate('ops cleanup');
    } finally {
      await client.connection.close();
    }
    await expect(agent.createSession({ sessionId })).rejects.toBeInstanceOf(SessionClosedError);
  }, 30_000);
});
