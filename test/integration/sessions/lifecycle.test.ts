/**
 * Adversarial: SessionEnd on every ending path, session ids, attach, per-event rules,
 * odd callback behaviour. Each test asserts what the contract says; a failure is a defect.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  HookError,
  HookEvent,
  SessionClosedError,
  SessionNotFoundError,
  type Agent,
  type HookCallback,
  type HookInput,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import {
  rawClient,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
  gate,
} from '../../helpers/common.js';

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
  it('idle timeout while a cancelled callback has not settled: SessionEnd waits for it to settle, then runs once (idle_timeout)', async () => {
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
    // The idle timeout fired (the session is closing), but SessionEnd waits for the stuck
    // callback to settle: no marker yet, nothing ran, the cleanup still pending.
    await waitFor(
      async () => (await session.describe()).status === 'closing',
      15_000,
      'the idle timeout',
    );
    const waiting = await session.describe();
    expect(waiting.pendingCleanups).toBe(1);
    expect(waiting.sessionEndMarker).toBeUndefined();
    expect(ends).toEqual([]);
    hold.open();
    await waitFor(async () => (await session.describe()).status === 'closed', 15_000, 'idle');
    const timeline = await session.timeline();
    expect(timeline.filter((e) => e.event === 'SessionEnd').map((e) => e.outcome)).toEqual([
      'continue',
    ]);
    expect(ends.map((e) => e.reason)).toEqual(['idle_timeout']);
  }, 30_000);

  it('cancelled from outside while a cancelled callback has not settled: SessionEnd waits for it to settle, then runs once (cancelled)', async () => {
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
    // The cancel reached the workflow (it is closing), but SessionEnd waits for the stuck
    // callback: no marker yet, nothing ran, the cleanup still pending.
    await waitFor(
      async () => (await session.describe()).status === 'closing',
      15_000,
      'the cancel to reach the workflow',
    );
    const waiting = await session.describe();
    expect(waiting.pendingCleanups).toBe(1);
    expect(waiting.sessionEndMarker).toBeUndefined();
    expect(ends).toEqual([]);
    hold.open();
    await waitFor(async () => (await session.describe()).status === 'closed', 15_000, 'cancel');
    expect(ends.map((e) => e.reason)).toEqual(['cancelled']);
    const timeline = await session.timeline();
    expect(timeline.find((e) => e.outcome === 'timeout')).toMatchObject({ cleanup: 'settled' });
    expect(timeline.filter((e) => e.event === 'SessionEnd').map((e) => e.outcome)).toEqual([
      'continue',
    ]);
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
    const started: HookInput[] = [];
    const submitted: HookInput[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionStart]: [
          async (input) => {
            started.push(input);
            return { action: 'skip', modifiedInput: { isResume: true, sessionId: 'other' } };
          },
        ],
        [HookEvent.UserPromptSubmit]: [
          async (input) => (submitted.push(input), { action: 'continue' }),
        ],
      },
    });
    // The callback ran and its skip was recorded: what follows is it being ignored.
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ sessionId: session.id, isResume: false });
    expect((await session.timeline())[0]).toMatchObject({
      event: HookEvent.SessionStart,
      outcome: 'skip',
    });
    expect((await session.send('hi')).text()).toBe('echo:hi');
    // Later events see the session as it is, not as the callback's modifiedInput had it.
    expect(submitted.map((i) => [i.sessionId, i.isResume])).toEqual([[session.id, undefined]]);
    expect((await session.describe()).sessionId).toBe(session.id);
    await session.close();
  }, 30_000);

  it('TaskCompleted modifiedInput/skip are ignored; abort fails the request with the reason', async () => {
    let mode: 'skip' | 'abort' = 'skip';
    const summaries: unknown[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.TaskCompleted]: [
          async (input) => {
            summaries.push(input.resultSummary);
            return mode === 'skip'
              ? { action: 'skip', modifiedInput: { resultSummary: 'changed' } }
              : { action: 'abort', reason: 'quality gate failed' };
          },
        ],
      },
    });
    const response = await session.send('one');
    // The callback saw the answer and skipped with an edit: the answer stands as the model gave it.
    expect(summaries).toEqual(['echo:one']);
    expect(response.status).toBe('completed');
    expect(response.text()).toBe('echo:one');
    const assistant = (await session.conversation()).filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => (m.role === 'assistant' ? m.text : undefined))).toEqual([
      'echo:one',
    ]);
    expect(
      (await session.timeline()).filter((e) => e.event === HookEvent.TaskCompleted),
    ).toMatchObject([{ outcome: 'skip' }]);
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

  it('a 3 MB modifiedInput.userPrompt: the prompt runs with the whole edited text, and the session stays usable', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const seenByModel: number[] = [];
    const bigModel = scriptedModel((request) => {
      const prompt = typeof request.prompt === 'string' ? request.prompt : '';
      seenByModel.push(prompt.length);
      return `echo:${prompt.slice(0, 10)}`;
    });
    const local = await createAgent({
      model: bigModel,
      advanced: {
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-life-big') },
      },
    });
    try {
      const session = await local.createSession({
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async (input) =>
              input.userPrompt === 'x'
                ? { action: 'continue', modifiedInput: { userPrompt: big } }
                : { action: 'continue' },
          ],
        },
      });
      // README, Long sessions: payloads past Temporal's limits go to the payload store, and
      // workflow code, hooks and the model still see whole values.
      const response = await session.send('x');
      expect(response.status).toBe('completed');
      expect(response.text()).toBe(`echo:${'x'.repeat(10)}`);
      expect(seenByModel).toEqual([big.length]);
      const user = (await session.conversation()).find((m) => m.role === 'user');
      expect(user?.role === 'user' ? user.content : undefined).toBe(big);
      expect((await session.send('small')).text()).toBe('echo:small');
      await session.close();
    } finally {
      await local.shutdown();
    }
  }, 60_000);

  it('a 3 MB prompt passed to send(): a ConfigError naming its size and the limit; nothing is sent', async () => {
    const session = await agent.createSession();
    const prompt = 'y'.repeat(3 * 1024 * 1024);
    const error = await session.send(prompt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(
      `the prompt is ${prompt.length + 2} bytes of JSON; the limit is 1048576`,
    );
    expect((await session.describe()).promptsHandled).toBe(0);
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
  }, 60_000);

  it('hookTimeoutMs: 1 — the dispatch times out without waiting for a callback still running; the session stays usable', async () => {
    let hold: ReturnType<typeof gate> | undefined = gate();
    let returned = false;
    const session = await agent.createSession({
      hookTimeoutMs: 1,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            // Held until send() has rejected: the timeout cannot have waited for it.
            if (hold) await hold.opened;
            returned = true;
            return { action: 'continue' };
          },
        ],
      },
    });
    const error = await session.send('x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'HOOK_TIMEOUT', timeoutMs: 1 });
    expect(returned).toBe(false);
    hold.open();
    hold = undefined;
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 15_000, 'settle');
    expect(returned).toBe(true);
    expect((await session.send('y')).status).toBe('completed');
    await session.close();
  }, 30_000);
});

describe('session ids and attach', () => {
  // Unique per run (a closed session's id cannot be used again on the shared server).
  const unique = (base: string, length = base.length + 9) =>
    `${base.slice(0, length - 9)}-${randomUUID().slice(0, 8)}`;
  it.each([
    ['spaces, slashes, unicode', () => unique('a b/c?#%&😀\tz')],
    ['a newline', () => unique('line1\nline2')],
    ['200 chars (the longest allowed)', () => unique('k'.repeat(200), 200)],
  ])(
    'sessionId with %s: the session works and can be attached to by its id',
    async (label, makeId) => {
      const sessionId = makeId();
      if (label.startsWith('200')) expect(sessionId).toHaveLength(200);
      const session = await agent.createSession({ sessionId });
      expect(session.id).toBe(sessionId);
      expect((await session.send('hi')).text()).toBe('echo:hi');
      const attached = await agent.session(sessionId);
      expect(attached.workflowId).toBe(session.workflowId);
      expect(await attached.close()).toEqual({ closedNow: true, sessionEndRan: false });
    },
    30_000,
  );

  it.each([
    ['201 chars', 'k'.repeat(201)],
    ['1500 chars', 'k'.repeat(1500)],
    ['the empty string', ''],
  ])(
    'sessionId of %s: createSession fails up front with a ConfigError naming the limit',
    async (_l, sessionId) => {
      const error = await agent.createSession({ sessionId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
      expect((error as Error).message).toContain(
        `sessionId must be a string of 1 to 200 characters, got ${sessionId.length} characters`,
      );
      // Nothing started: no workflow has this id.
      await expect(agent.session(sessionId)).rejects.toBeInstanceOf(SessionNotFoundError);
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
