/**
 * Adversarial: SessionEnd on every ending path, session ids, attach, per-event rules,
 * odd callback behaviour. Each test asserts what the contract says; a failure is a defect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentSdkError,
  createAgent,
  HookError,
  HookEvent,
  SessionClosedError,
  type Agent,
  type HookCallback,
  type HookInput,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor, gate } from '../../helpers.js';

let agent: Agent;
const model = scriptedModel((request) => {
  const prompt = request.prompt;
  const text = typeof prompt === 'string' ? prompt : JSON.stringify(prompt ?? null);
  return `echo:${text.slice(0, 100)}`;
});

beforeAll(async () => {
  agent = await createAgent({
    model,
    advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-life') } },
  });
});
afterAll(() => agent?.shutdown());

const cont: HookCallback = async () => ({ action: 'continue' });

describe('SessionEnd with a callback still cleaning up', () => {
  it('idle timeout while a cancelled callback has not settled: SessionEnd still runs once (idle_timeout)', async () => {
    const hold = gate();
    const ends: HookInput[] = [];
    const session = await agent.createSession({
      hookTimeoutMs: 100,
      idleTimeoutMs: 1_500,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            await hold.opened; // ignores its signal
            return { action: 'continue' };
          },
        ],
        [HookEvent.SessionEnd]: [
          async (input) => {
            ends.push(input);
            return { action: 'continue' };
          },
        ],
      },
    });
    expect(await session.send('x').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    // The session ends only once the stuck callback settles (fail-closed), then runs SessionEnd.
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await session.describe()).status).not.toBe('closed');
    hold.open();
    await waitFor(async () => (await session.describe()).status === 'closed', 15_000, 'idle');
    const timeline = await session.timeline();
    expect(timeline.filter((e) => e.event === 'SessionEnd').map((e) => e.outcome)).toEqual([
      'continue',
    ]);
    expect(ends.map((e) => e.reason)).toEqual(['idle_timeout']);
  }, 30_000);

  it('cancelled from outside while a cancelled callback has not settled: SessionEnd still runs once (cancelled)', async () => {
    const hold = gate();
    const ends: HookInput[] = [];
    const session = await agent.createSession({
      hookTimeoutMs: 100,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            await hold.opened;
            return { action: 'continue' };
          },
        ],
        [HookEvent.SessionEnd]: [
          async (input) => {
            ends.push(input);
            return { action: 'continue' };
          },
        ],
      },
    });
    expect(await session.send('x').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    const client = await rawClient();
    await client.workflow.getHandle(session.workflowId).cancel();
    await client.connection.close();
    await new Promise((r) => setTimeout(r, 1_000));
    hold.open();
    await waitFor(async () => (await session.describe()).status === 'closed', 15_000, 'cancel');
    expect(ends.map((e) => e.reason)).toEqual(['cancelled']);
  }, 30_000);
});

describe('per-event rules', () => {
  it('SessionEnd abort and skip are ignored: close() succeeds', async () => {
    for (const action of ['abort', 'skip'] as const) {
      const session = await agent.createSession({
        hooks: { [HookEvent.SessionEnd]: [async () => ({ action, reason: 'nope' })] },
      });
      expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: true });
    }
  }, 30_000);

  it('SessionStart skip and modifiedInput are ignored: the session opens', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionStart]: [
          async () => ({ action: 'skip', modifiedInput: { isResume: true, sessionId: 'other' } }),
        ],
      },
    });
    expect((await session.send('hi')).text()).toBe('echo:hi');
    await session.close();
  }, 30_000);

  it('TaskCompleted modifiedInput/skip are ignored; abort fails the request with the reason', async () => {
    let mode: 'skip' | 'abort' = 'skip';
    const session = await agent.createSession({
      hooks: {
        [HookEvent.TaskCompleted]: [
          async () =>
            mode === 'skip'
              ? { action: 'skip', modifiedInput: { resultSummary: 'changed' } }
              : { action: 'abort', reason: 'quality gate failed' },
        ],
      },
    });
    expect((await session.send('one')).text()).toBe('echo:one');
    mode = 'abort';
    const error = await session.send('two').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({
      message: 'quality gate failed',
      event: 'TaskCompleted',
      callbackIndex: 0,
    });
    await session.close();
  }, 30_000);

  it.each([
    ['a string', 'boom-string'],
    ['a plain object', { code: 'E_CUSTOM', detail: 1 }],
    ['undefined', undefined],
    ['null', null],
  ])(
    'a callback throwing %s: send() rejects with an Error naming the event',
    async (_l, thrown) => {
      let threw = false;
      const session = await agent.createSession({
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async () => {
              if (threw) return { action: 'continue' };
              threw = true;
              throw thrown;
            },
          ],
        },
      });
      const error = await session.send('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ event: 'UserPromptSubmit', callbackIndex: 0 });
      expect((await session.send('after')).status).toBe('completed');
      await session.close();
    },
    30_000,
  );

  it('a 3 MB modifiedInput.userPrompt: send() settles promptly with an SDK error or succeeds', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) =>
            input.userPrompt === 'x'
              ? { action: 'continue', modifiedInput: { userPrompt: big } }
              : { action: 'continue' },
        ],
      },
    });
    const outcome = await Promise.race([
      session.send('x').then(
        (r) => ({ ok: true, status: r.status }),
        (e: unknown) => ({ ok: false, error: e }),
      ),
      new Promise((r) => setTimeout(() => r('still pending after 20s'), 20_000)),
    ]);
    expect(outcome).not.toBe('still pending after 20s');
    const o = outcome as { ok: boolean; error?: unknown };
    if (!o.ok) {
      expect(o.error).toBeInstanceOf(AgentSdkError);
      expect((o.error as AgentSdkError).code).not.toBe('ENGINE_ERROR');
      expect((o.error as AgentSdkError).code).not.toBe('HOOK_WORKER_LOST');
    }
    const after = await Promise.race([
      session.send('small').then(
        (r) => r.status,
        (e: unknown) => e,
      ),
      new Promise((r) => setTimeout(() => r('pending'), 15_000)),
    ]);
    expect(after).toBe('completed');
    await session.close().catch(() => undefined);
  }, 60_000);

  it('a 3 MB prompt passed to send(): a clear SDK error, not EngineError', async () => {
    const session = await agent.createSession();
    const error = await session.send('y'.repeat(3 * 1024 * 1024)).catch((e: unknown) => e);
    const closed = await Promise.race([
      session.close().then(
        (r) => r,
        (e: unknown) => e,
      ),
      new Promise((r) => setTimeout(() => r('close pending after 10s'), 10_000)),
    ]);
    const c = await rawClient();
    await c.workflow
      .getHandle(session.workflowId)
      .terminate('adversarial cleanup')
      .catch(() => 0);
    await c.connection.close();
    expect(error).toBeInstanceOf(AgentSdkError);
    expect((error as AgentSdkError).code).not.toBe('ENGINE_ERROR');
    expect(closed).toMatchObject({ closedNow: true });
  }, 60_000);

  it('hookTimeoutMs: 1 — a callback that needs a macrotask times out promptly; the session stays usable', async () => {
    let slow = true;
    const session = await agent.createSession({
      hookTimeoutMs: 1,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            if (slow) await new Promise((r) => setTimeout(r, 20));
            return { action: 'continue' };
          },
        ],
      },
    });
    const started = Date.now();
    const error = await session.send('x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'HOOK_TIMEOUT', timeoutMs: 1 });
    expect(Date.now() - started).toBeLessThan(3_000);
    slow = false;
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 10_000, 'settle');
    expect((await session.send('y')).status).toBe('completed');
    await session.close();
  }, 30_000);
});

describe('session ids and attach', () => {
  it.each([
    ['spaces, slashes, unicode', 'a b/c?#%&😀\tz'],
    ['a newline', 'line1\nline2'],
    ['1500 chars', 'k'.repeat(1500)],
  ])(
    'sessionId with %s: works or fails with ConfigError up front',
    async (_l, sessionId) => {
      const outcome = await agent.createSession({ sessionId }).then(
        async (s) => {
          const text = (await s.send('hi')).text();
          const attached = await agent.session(sessionId);
          await attached.close();
          return { ok: true, text };
        },
        (e: unknown) => ({ ok: false, error: e }),
      );
      if (!outcome.ok) {
        expect((outcome as { error: AgentSdkError }).error).toMatchObject({
          code: 'CONFIG_INVALID',
        });
      }
    },
    30_000,
  );

  it('createSession retried with the same sessionId and hooks: each callback still runs once per event', async () => {
    let calls = 0;
    const hooks = {
      [HookEvent.UserPromptSubmit]: [
        async () => {
          calls++;
          return { action: 'continue' as const };
        },
      ],
    };
    const sessionId = `retry-${Date.now()}`;
    const s1 = await agent.createSession({ sessionId, hooks });
    const s2 = await agent.createSession({ sessionId, hooks }); // a retry: attaches
    expect(s2.workflowId).toBe(s1.workflowId);
    await s1.send('x');
    expect(calls).toBe(1);
    await s1.close();
  }, 30_000);

  it('re-creating a closed session id fails with SessionClosedError and leaves no callbacks behind', async () => {
    const sessionId = `closed-${Date.now()}`;
    const s = await agent.createSession({ sessionId });
    await s.close();
    const error = await agent
      .createSession({ sessionId, hooks: { [HookEvent.SessionEnd]: [cont] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionClosedError);
    const leaked = agent.worker.registry.callbacksFor('default', sessionId, HookEvent.SessionEnd);
    expect(leaked).toHaveLength(0);
    // attach + timeline of the closed session
    const attached = await agent.session(sessionId);
    expect(await attached.timeline()).toEqual([]);
    expect(await attached.close()).toEqual({ closedNow: false, sessionEndRan: false });
  }, 30_000);

  it('describe() of a closed session reports how many prompts it handled', async () => {
    const s = await agent.createSession();
    await s.send('a');
    await s.send('b');
    await s.close();
    await waitFor(async () => {
      const c = await rawClient();
      try {
        return (await c.workflow.getHandle(s.workflowId).describe()).status.name !== 'RUNNING';
      } finally {
        await c.connection.close();
      }
    }, 10_000);
    const d = await s.describe();
    expect(d.promptsHandled).toBe(2);
  }, 30_000);

  it('timeline of a session whose SessionStart failed, through attach', async () => {
    const sessionId = `startfail-${Date.now()}`;
    const error = await agent
      .createSession({
        sessionId,
        hooks: { [HookEvent.SessionStart]: [async () => ({ action: 'abort', reason: 'no' })] },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SESSION_START_FAILED' });
    const attached = await agent.session(sessionId);
    const timeline = await attached.timeline();
    expect(timeline.map((e) => e.outcome)).toEqual(['abort']);
    expect(await attached.send('x').catch((e: unknown) => e)).toBeInstanceOf(SessionClosedError);
  }, 30_000);
});

describe('handoff', () => {
  it('refuses a handoff to a task queue nobody polls, with a clear error', async () => {
    const session = await agent.createSession({ hooks: { [HookEvent.SessionEnd]: [cont] } });
    const error = await session
      .handoff({ taskQueue: uniqueTaskQueue('nobody') })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as Error).message).toMatch(/no worker polls/);
    expect((await session.send('still here')).status).toBe('completed');
    await session.close();
  }, 30_000);

  it("handoff({ taskQueue: '' }) is refused with a ConfigError and the session stays usable", async () => {
    const session = await agent.createSession();
    const error = await session.handoff({ taskQueue: '' }).catch((e: unknown) => e);
    const after = await Promise.race([
      session.send('x').then(
        (r) => r.status,
        (e: unknown) => e,
      ),
      new Promise((r) => setTimeout(() => r('pending'), 10_000)),
    ]);
    const c = await rawClient();
    await c.workflow
      .getHandle(session.workflowId)
      .terminate('adversarial cleanup')
      .catch(() => 0);
    await c.connection.close();
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(after).toBe('completed');
  }, 30_000);
});
