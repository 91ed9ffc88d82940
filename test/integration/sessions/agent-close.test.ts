/**
 * `close()` on the Agent and on a Session (issue 13, items 1 and 9): a refused close stops
 * nothing, a retried close closes without calling SessionEnd again, close twice (in a row or
 * at once) resolves twice, and a terminated session says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAgent,
  EngineError,
  HookEvent,
  SessionClosedError,
  type Agent,
  type AgentOptions,
  type HookCallback,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import {
  gate,
  rawClient,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
} from '../../helpers/common.js';

const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.shutdown()));
});

/** Ids of the sessions each agent started, in order (its SessionStart records them). */
const started = new WeakMap<Agent, string[]>();

async function agentWith(advanced: AgentOptions['advanced'] = {}): Promise<Agent> {
  const ids: string[] = [];
  const agent = await createAgent({
    model: scriptedModel((request) => `echo:${String(request.prompt)}`),
    advanced: {
      ...advanced,
      hooks: {
        ...advanced.hooks,
        [HookEvent.SessionStart]: [
          async (input) => (ids.push(input.sessionId), { action: 'continue' }),
        ],
      },
      temporal: {
        ...advanced.temporal,
        address: temporalAddress(),
        taskQueue: uniqueTaskQueue('agent-close'),
      },
    },
  });
  agents.push(agent);
  started.set(agent, ids);
  return agent;
}

/** The id of the agent's default session: the first it started through `send()`. */
function defaultSessionId(agent: Agent): string {
  const id = started.get(agent)?.[0];
  if (!id) throw new Error('the agent started no session yet');
  return id;
}

/** Whether the agent's worker has stopped (its `done` settled) within `ms`. */
async function workerStopped(agent: Agent, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    agent.worker.done.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return stopped;
}

describe('agent.close() refused', () => {
  it('while a cancelled callback cleans up (HOOK_CLEANUP_PENDING): the agent keeps running, and a retried close closes and stops it', async () => {
    const hold = gate();
    const ends: string[] = [];
    const agent = await agentWith({
      hookTimeoutMs: 200,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            if (input.userPrompt === 'stuck') await hold.opened; // ignores its signal
            return { action: 'continue' };
          },
        ],
        [HookEvent.SessionEnd]: [
          async (input) => {
            ends.push(String(input.reason));
            return { action: 'continue' };
          },
        ],
      },
    });
    expect(await agent.send('stuck').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    await expect(agent.close()).rejects.toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });

    // Nothing was stopped: the client reaches the server, the worker runs workflows and
    // activities, and the default session is open.
    expect(await workerStopped(agent, 200)).toBe(false);
    const other = await agent.createSession();
    expect((await other.send('elsewhere')).text()).toBe('echo:elsewhere');
    await other.close();
    const session = await agent.session(defaultSessionId(agent));
    expect((await session.describe()).status).toBe('open');

    hold.open();
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 15_000, 'settle');
    expect((await agent.send('after')).text()).toBe('echo:after');
    expect(await agent.close()).toEqual({ closedNow: true, sessionEndRan: true });
    expect(ends).toEqual(['other', 'other']); // the other session's, then the default one's
    expect(await workerStopped(agent, 15_000)).toBe(true);
    expect(await agent.close()).toEqual({ closedNow: false, sessionEndRan: false });
    await expect(agent.send('late')).rejects.toBeInstanceOf(SessionClosedError);
  }, 60_000);

  it.each([
    [
      'SessionEnd throws',
      (): HookCallback => async () => {
        throw new Error('flush failed');
      },
      { message: 'flush failed' },
    ],
    [
      'SessionEnd times out',
      (): HookCallback => async (input) => {
        await new Promise((resolve) =>
          input.abortSignal!.addEventListener('abort', resolve, { once: true }),
        );
        return { action: 'continue' };
      },
      { code: 'HOOK_TIMEOUT' },
    ],
  ])(
    'because %s: the agent keeps running, and the retried close closes without calling SessionEnd again',
    async (_label, makeEnd, expected) => {
      let ends = 0;
      const end = makeEnd();
      const agent = await agentWith({
        sessionEndHookTimeoutMs: 300,
        hooks: {
          [HookEvent.SessionEnd]: [
            async (input) => {
              ends++;
              return end(input);
            },
          ],
        },
      });
      expect((await agent.send('one')).text()).toBe('echo:one');
      await expect(agent.close()).rejects.toMatchObject(expected);
      expect(await workerStopped(agent, 200)).toBe(false);
      // The session is still open and takes prompts.
      expect((await agent.send('two')).text()).toBe('echo:two');
      // A timed-out callback that settled (it honours its signal) no longer holds the close.
      const session = await agent.session(defaultSessionId(agent));
      await waitFor(async () => (await session.describe()).pendingCleanups === 0, 10_000, 'settle');
      expect(await agent.close()).toEqual({ closedNow: true, sessionEndRan: false });
      expect(ends).toBe(1);
      expect(await workerStopped(agent, 15_000)).toBe(true);
    },
    60_000,
  );
});

describe('agent.shutdown() after a refused close', () => {
  it('stops at once, without waiting the grace time for a callback that outlived its dispatch', async () => {
    const hold = gate();
    let settled = false;
    const agent = await agentWith({
      hookTimeoutMs: 200,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            await hold.opened; // ignores its signal
            settled = true;
            return { action: 'continue' };
          },
        ],
      },
      // Far longer than the test's own timeout: a shutdown that waited for it would hang.
      temporal: { shutdownGraceTimeMs: 600_000 },
    });
    expect(await agent.send('stuck').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    await expect(agent.close()).rejects.toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });
    await agent.shutdown();
    expect(await workerStopped(agent, 1000)).toBe(true);
    expect(settled).toBe(false); // it stopped while the callback still ran
    hold.open();
  });
});

describe('agent.close() twice', () => {
  it('in a row: the second resolves with closedNow false; SessionEnd ran once', async () => {
    let ends = 0;
    const agent = await agentWith({
      hooks: { [HookEvent.SessionEnd]: [async () => (ends++, { action: 'continue' })] },
    });
    await agent.send('x');
    expect(await agent.close()).toEqual({ closedNow: true, sessionEndRan: true });
    expect(await agent.close()).toEqual({ closedNow: false, sessionEndRan: false });
    expect(ends).toBe(1);
  }, 30_000);

  it('at once: both resolve, the second with closedNow false, after SessionEnd finished; SessionEnd ran once', async () => {
    const entered = gate();
    const release = gate();
    const events: string[] = [];
    const agent = await agentWith({
      hooks: {
        [HookEvent.SessionEnd]: [
          async () => {
            events.push('SessionEnd:start');
            entered.open();
            await release.opened;
            events.push('SessionEnd:end');
            return { action: 'continue' };
          },
        ],
      },
    });
    await agent.send('x');
    const first = agent.close().then((r) => (events.push('first'), r));
    await entered.opened;
    const second = agent.close().then((r) => (events.push('second'), r));
    release.open();
    expect(await first).toEqual({ closedNow: true, sessionEndRan: true });
    expect(await second).toEqual({ closedNow: false, sessionEndRan: false });
    // Neither resolved before SessionEnd had finished.
    expect(events.slice(0, 2)).toEqual(['SessionEnd:start', 'SessionEnd:end']);
    expect(events.slice(2).sort()).toEqual(['first', 'second']);
  }, 30_000);

  it('at once with a failing SessionEnd: both reject with its error, and the agent keeps running', async () => {
    const entered = gate();
    const release = gate();
    const agent = await agentWith({
      hooks: {
        [HookEvent.SessionEnd]: [
          async () => {
            entered.open();
            await release.opened;
            throw new Error('flush failed');
          },
        ],
      },
    });
    await agent.send('x');
    const first = agent.close().catch((e: unknown) => e);
    await entered.opened;
    const second = agent.close().catch((e: unknown) => e);
    release.open();
    expect(await first).toMatchObject({ message: 'flush failed' });
    expect(await second).toMatchObject({ message: 'flush failed' });
    expect((await agent.send('still open')).text()).toBe('echo:still open');
    expect(await agent.close()).toEqual({ closedNow: true, sessionEndRan: false });
  }, 30_000);
});

describe('agent.close() with no default session', () => {
  it('resolves undefined, touches no session and stops the agent; again resolves undefined', async () => {
    const agent = await agentWith();
    const session = await agent.createSession();
    expect(await agent.close()).toBeUndefined();
    expect(await workerStopped(agent, 15_000)).toBe(true);
    expect(await agent.close()).toBeUndefined();
    await expect(agent.createSession()).rejects.toBeInstanceOf(EngineError);
    // The session it did not own stays open on the server.
    const client = await rawClient();
    try {
      const described = await client.workflow.getHandle(session.workflowId).describe();
      expect(described.status.name).toBe('RUNNING');
      await client.workflow.getHandle(session.workflowId).terminate('test cleanup');
    } finally {
      await client.connection.close();
    }
  }, 30_000);
});

describe('agent.close() after shutdown()', () => {
  it('rejects with an EngineError naming the default session, which stays open', async () => {
    const agent = await agentWith();
    await agent.send('x');
    const sessionId = defaultSessionId(agent);
    await agent.shutdown();
    const error = await agent.close().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toContain(sessionId);
    const client = await rawClient();
    try {
      const handle = client.workflow.getHandle(`session-${sessionId}`);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate('test cleanup');
    } finally {
      await client.connection.close();
    }
  }, 30_000);
});

describe('session.close() twice', () => {
  it('in a row: the second resolves with closedNow false and calls nothing', async () => {
    let ends = 0;
    const agent = await agentWith({
      hooks: { [HookEvent.SessionEnd]: [async () => (ends++, { action: 'continue' })] },
    });
    const session = await agent.createSession();
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: true });
    expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
    expect(ends).toBe(1);
  }, 30_000);

  it('at once: both resolve after SessionEnd finished, one with closedNow true and one false', async () => {
    const entered = gate();
    const release = gate();
    let ends = 0;
    const agent = await agentWith({
      hooks: {
        [HookEvent.SessionEnd]: [
          async () => {
            ends++;
            entered.open();
            await release.opened;
            return { action: 'continue' };
          },
        ],
      },
    });
    const session = await agent.createSession();
    const attached = await agent.session(session.id);
    const first = session.close();
    await entered.opened;
    const second = attached.close();
    release.open();
    expect(await first).toEqual({ closedNow: true, sessionEndRan: true });
    expect(await second).toEqual({ closedNow: false, sessionEndRan: false });
    expect(ends).toBe(1);
  }, 30_000);
});

describe('a terminated session', () => {
  it('answers close() with terminated (the reason, sessionEndRan false) and describe() says so; SessionEnd never ran', async () => {
    let ends = 0;
    const agent = await agentWith({
      hooks: { [HookEvent.SessionEnd]: [async () => (ends++, { action: 'continue' })] },
    });
    const session = await agent.createSession();
    expect((await session.send('x')).status).toBe('completed');
    const client = await rawClient();
    try {
      await client.workflow.getHandle(session.workflowId).terminate('ops: runaway session');
    } finally {
      await client.connection.close();
    }
    const before = Date.now();
    const closed = await session.close();
    expect(closed).toMatchObject({
      closedNow: false,
      sessionEndRan: false,
      terminated: { reason: 'ops: runaway session' },
    });
    expect(closed.terminated!.at).toBeInstanceOf(Date);
    expect(closed.terminated!.at.getTime()).toBeLessThanOrEqual(before);
    const described = await session.describe();
    expect(described).toMatchObject({
      status: 'closed',
      terminated: { reason: 'ops: runaway session' },
    });
    expect(described.sessionEndMarker).toBeUndefined();
    const error = await session.send('late').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionClosedError);
    expect((error as Error).message).toMatch(/terminated: ops: runaway session/);
    expect(ends).toBe(0);
  }, 30_000);

  it('rejects a send in flight when the session is terminated with SessionClosedError naming the termination', async () => {
    const inHook = gate();
    const hold = gate();
    const agent = await agentWith({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            inHook.open();
            await hold.opened;
            return { action: 'continue' };
          },
        ],
      },
    });
    const session = await agent.createSession();
    const sending = session.send('slow').catch((e: unknown) => e);
    await inHook.opened;
    const client = await rawClient();
    try {
      await client.workflow.getHandle(session.workflowId).terminate('ops: pulled the plug');
    } finally {
      await client.connection.close();
      hold.open();
    }
    const error = await sending;
    expect(error).toBeInstanceOf(SessionClosedError);
    expect((error as Error).message).toMatch(/terminated: ops: pulled the plug/);
  }, 30_000);

  it('as the default session: agent.close() resolves with terminated and stops the agent', async () => {
    const agent = await agentWith();
    await agent.send('x');
    const client = await rawClient();
    try {
      await client.workflow.getHandle(`session-${defaultSessionId(agent)}`).terminate('ops');
    } finally {
      await client.connection.close();
    }
    expect(await agent.close()).toMatchObject({
      closedNow: false,
      sessionEndRan: false,
      terminated: { reason: 'ops' },
    });
    expect(await workerStopped(agent, 15_000)).toBe(true);
  }, 30_000);
});
