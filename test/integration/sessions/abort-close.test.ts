/**
 * Adversarial: abort, close and the caller's signal racing prompts. Each test asserts what
 * the contract says should happen; a failing test is a defect.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  HookEvent,
  SessionClosedError,
  type Agent,
  type AgentModel,
  type HookInput,
} from '../../../src/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor, gate } from '../../helpers/common.js';
import { waitForSendAccepted, waitForUpdates } from '../../helpers/history.js';

let agent: Agent;
/** Prompts containing `slow-model` make the model wait for its signal (or 8 s). */
const modelSignals: AbortSignal[] = [];
const model: AgentModel = {
  name: 'adversarial',
  async step(request) {
    const prompt = typeof request.prompt === 'string' ? request.prompt : '';
    if (prompt.includes('slow-model')) {
      modelSignals.push(request.signal);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, 8_000);
        request.signal.addEventListener('abort', () => (clearTimeout(t), resolve(undefined)), {
          once: true,
        });
      });
    }
    return { text: `echo:${prompt}`, finishReason: 'stop' };
  },
};

beforeAll(async () => {
  agent = await createAgent({
    model,
    advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-abort') } },
  });
});
afterAll(() => agent?.shutdown());

const waitAbort = (input: HookInput) =>
  new Promise((resolve) => input.abortSignal!.addEventListener('abort', resolve, { once: true }));

describe('the caller signal of send()', () => {
  it("aborting a queued prompt's signal aborts that prompt, not the one running", async () => {
    const entered = gate();
    const release = gate();
    const seen: string[] = [];
    let signalOfA: AbortSignal | undefined;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            seen.push(String(input.userPrompt));
            if (input.userPrompt === 'A') {
              signalOfA = input.abortSignal;
              entered.open();
              await Promise.race([release.opened, waitAbort(input)]);
            }
            return { action: 'continue' };
          },
        ],
      },
    });
    const a = session.send('A');
    await entered.opened;
    const controllerB = new AbortController();
    const requestIdB = `b-${randomUUID()}`;
    const b = session.send('B', { signal: controllerB.signal, requestId: requestIdB });
    await waitForSendAccepted(session.workflowId, requestIdB); // B is queued behind A
    const reasonB = new Error('caller of B gave up');
    controllerB.abort(reasonB);
    await waitForUpdates(
      session.workflowId,
      (updates) => updates.some((u) => u.name === 'abort' && u.completed),
      "B's abort to be recorded",
    );
    release.open();
    const [ra, rb] = await Promise.all([a, b]);
    // Contract §8: "abort() (or the caller's signal) stops the current prompt" — B's
    // signal belongs to B; A's caller never aborted.
    expect(ra.status).toBe('completed');
    expect(signalOfA?.aborted).toBe(false);
    expect(rb.status).toBe('aborted');
    expect(rb.abortReason).toBe(reasonB);
    // B never started: its UserPromptSubmit never ran.
    expect(seen).toEqual(['A']);
    await session.close();
  }, 30_000);
});

describe('close() racing a prompt', () => {
  it('a prompt whose hook is running when close() arrives resolves aborted, with a SessionClosedError as its reason', async () => {
    const entered = gate();
    let hookSignal: AbortSignal | undefined;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            hookSignal = input.abortSignal;
            entered.open();
            await waitAbort(input); // honours its signal
            return { action: 'continue' };
          },
        ],
      },
    });
    const pending = session.send('x');
    await entered.opened;
    const closed = await session.close();
    const response = await pending;
    // README, Sessions: close() stops a running prompt; its send() resolves `aborted`, with
    // a SessionClosedError as reason.
    expect(closed).toEqual({ closedNow: true, sessionEndRan: false });
    expect(response.status).toBe('aborted');
    expect(response.abortReason).toBeInstanceOf(SessionClosedError);
    expect(hookSignal?.aborted).toBe(true);
  }, 30_000);

  it('close() while a prompt hook ignores its signal: once it settles, close() still runs SessionEnd (marker must not be burned by a refused dispatch)', async () => {
    const entered = gate();
    const hold = gate();
    const ends: HookInput[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            entered.open();
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
    const pending = session.send('x').catch((e: unknown) => e);
    await entered.opened;
    const first = await session.close().catch((e: unknown) => e);
    hold.open();
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 10_000, 'settle');
    const second = await session.close().catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });
    expect(await pending).toMatchObject({ status: 'aborted' });
    expect(second).toEqual({ closedNow: true, sessionEndRan: true });
    // §8: close() runs SessionEnd once with reason 'other'; §4.2: close() works again once
    // the callback settles. SessionEnd must have run exactly once in total.
    expect(ends.map((e) => e.reason)).toEqual(['other']);
  }, 30_000);

  it('two concurrent close(): neither resolves before SessionEnd has finished', async () => {
    const entered = gate();
    const release = gate();
    const ends: string[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionEnd]: [
          async () => {
            ends.push('start');
            entered.open();
            await release.opened;
            ends.push('end');
            return { action: 'continue' };
          },
        ],
      },
    });
    const order: string[] = [];
    const c1 = session.close().then((r) => order.push(`c1:${JSON.stringify(r)}@${ends.join(',')}`));
    await entered.opened;
    const c2 = session.close().then((r) => order.push(`c2:${JSON.stringify(r)}@${ends.join(',')}`));
    // The second close() is in the workflow while SessionEnd still runs.
    await waitForUpdates(
      session.workflowId,
      (updates) => updates.filter((u) => u.name === 'close').length === 2,
      'both close() calls to be accepted',
    );
    expect(order).toEqual([]);
    release.open();
    await Promise.all([c1, c2]);
    // Each close() resolves only after SessionEnd finished; the second shares the first's.
    expect(order.sort()).toEqual([
      'c1:{"closedNow":true,"sessionEndRan":true}@start,end',
      'c2:{"closedNow":false,"sessionEndRan":false}@start,end',
    ]);
  }, 30_000);

  it('two concurrent close() with a failing SessionEnd: the second must not report success', async () => {
    const entered = gate();
    const release = gate();
    let calls = 0;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionEnd]: [
          async () => {
            calls++;
            entered.open();
            await release.opened;
            throw new Error('flush failed');
          },
        ],
      },
    });
    const c1 = session.close().then(
      (r) => ({ ok: true, r }),
      (e: unknown) => ({ ok: false, e: (e as Error).message }),
    );
    await entered.opened;
    const c2 = session.close().then(
      (r) => ({ ok: true, r }),
      (e: unknown) => ({ ok: false, e: (e as Error).message }),
    );
    await waitForUpdates(
      session.workflowId,
      (updates) => updates.filter((u) => u.name === 'close').length === 2,
      'both close() calls to be accepted',
    );
    release.open();
    const [r1, r2] = await Promise.all([c1, c2]);
    expect(r1).toEqual({ ok: false, e: 'flush failed' });
    expect(calls).toBe(1);
    // A close() that overlapped a SessionEnd that then failed has not "closed without
    // calling it again after failure": it shares the outcome (rejects).
    expect(r2).toEqual({ ok: false, e: 'flush failed' });
  }, 30_000);

  it('queued prompts get SessionClosedError when close() arrives, and close() does not hang', async () => {
    const entered = gate();
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            if (input.userPrompt === 'first') {
              entered.open();
              await waitAbort(input);
            }
            return { action: 'continue' };
          },
        ],
      },
    });
    const p1 = session.send('first').catch((e: unknown) => e);
    await entered.opened;
    const [second, third] = [`second-${randomUUID()}`, `third-${randomUUID()}`];
    const p2 = session.send('second', { requestId: second }).catch((e: unknown) => e);
    const p3 = session.send('third', { requestId: third }).catch((e: unknown) => e);
    // Both are queued in the workflow behind the first.
    await waitForSendAccepted(session.workflowId, second);
    await waitForSendAccepted(session.workflowId, third);
    const closed = await session.close();
    const [r1, r2, r3] = await Promise.all([p1, p2, p3]);
    expect(closed).toEqual({ closedNow: true, sessionEndRan: false });
    expect(r1).toMatchObject({ status: 'aborted' });
    expect((r1 as { abortReason: unknown }).abortReason).toBeInstanceOf(SessionClosedError);
    expect(r2).toBeInstanceOf(SessionClosedError);
    expect(r3).toBeInstanceOf(SessionClosedError);
  }, 30_000);
});

describe('abort() and stale reasons', () => {
  it('abort() with nothing running returns false and does not leak its reason into a later cancellation', async () => {
    const entered = gate();
    let seenReason: unknown = 'unset';
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            entered.open();
            await waitAbort(input);
            seenReason = input.abortSignal!.reason;
            return { action: 'continue' };
          },
        ],
      },
    });
    const stale = new Error('stale abort from long ago');
    expect(await session.abort(stale)).toBe(false);
    const pending = session.send('x').catch((e: unknown) => e);
    await entered.opened;
    await session.close(); // cancels the prompt: nobody called abort() for it
    await pending;
    await waitFor(() => seenReason !== 'unset', 5_000, 'callback to see the abort');
    expect(seenReason).not.toBe(stale);
  }, 30_000);

  it('abort() during the model step resolves send() as aborted with the reason (not a ModelError)', async () => {
    const session = await agent.createSession();
    const pending = session.send('slow-model please').then(
      (r) => ({ ok: true as const, status: r.status, reason: r.abortReason }),
      (e: unknown) => ({ ok: false as const, error: e }),
    );
    const before = modelSignals.length;
    await waitFor(() => modelSignals.length > before, 10_000, 'model step to start');
    const reason = new Error('stop the model');
    expect(await session.abort(reason)).toBe(true);
    const outcome = await pending;
    expect(outcome).toMatchObject({ ok: true, status: 'aborted', reason });
    await session.close();
  }, 30_000);

  it.each([
    ['a string', 'just a string'],
    ['a number', 42],
    ['a plain object', { why: 'object' }],
  ])(
    'abort(%s): the callback gets the very value',
    async (_label, reason) => {
      const entered = gate();
      let seen: unknown = 'unset';
      const session = await agent.createSession({
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async (input) => {
              entered.open();
              await waitAbort(input);
              seen = input.abortSignal!.reason;
              return { action: 'continue' };
            },
          ],
        },
      });
      const pending = session.send('x');
      await entered.opened;
      await session.abort(reason);
      const response = await pending;
      expect(response.status).toBe('aborted');
      expect(seen).toBe(reason);
      expect(response.abortReason).toBe(reason);
      await session.close();
    },
    30_000,
  );

  it('send() with an already-aborted signal runs nothing and reports the very reason', async () => {
    let submits = 0;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            submits++;
            return { action: 'continue' };
          },
        ],
      },
    });
    const controller = new AbortController();
    const reason = { already: true };
    controller.abort(reason);
    const outcome = await session
      .send('x', { signal: controller.signal })
      .then((r) => ({ status: r.status, reason: r.abortReason }))
      .catch((e: unknown) => ({ error: e }));
    expect(submits).toBe(0);
    // §4.3: "The caller's signal already aborted: fail with the caller's own reason."
    expect(outcome).toMatchObject({ error: reason });
    await session.close();
  }, 30_000);

  it('send() with an already-aborted signal rejects with its reason even on a closed session (nothing is sent)', async () => {
    const session = await agent.createSession();
    await session.close();
    const controller = new AbortController();
    const reason = new Error('x');
    controller.abort(reason);
    const outcome = await session
      .send('x', { signal: controller.signal })
      .then((r) => r.status)
      .catch((e: unknown) => e);
    expect(outcome).toBe(reason);
  }, 30_000);
});
