/**
 * The hooks contract on a real Temporal server, in one process: one agent for the file,
 * each test with its own session and session-level hooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  HookEvent,
  HookError,
  HookTimeoutError,
  SessionClosedError,
  SessionNotFoundError,
  type Agent,
  type HookCallback,
  type HookInput,
} from '../../../src/index.js';
import { scriptedModel, type ScriptedModel } from '../../../src/testing/index.js';
import {
  rawClient,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
  gate,
} from '../../helpers/common.js';

let agent: Agent;
// Each session's model answers `echo:<prompt text>`, so tests see what reached the model.
const model: ScriptedModel = scriptedModel((request) => {
  const prompt = request.prompt;
  const text = typeof prompt === 'string' ? prompt : JSON.stringify(prompt ?? null);
  return `echo:${text}`;
});

beforeAll(async () => {
  agent = await createAgent({
    model,
    advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('contract') } },
  });
});
afterAll(() => agent?.shutdown());

const cont = (): ReturnType<HookCallback> => Promise.resolve({ action: 'continue' });

async function scheduledActivities(workflowId: string): Promise<string[]> {
  const client = await rawClient();
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name): name is string => Boolean(name));
  } finally {
    await client.connection.close();
  }
}

/** Activities scheduled in a history. */
function scheduledCount(events: Array<{ activityTaskScheduledEventAttributes?: unknown }>): number {
  return events.filter((e) => e.activityTaskScheduledEventAttributes).length;
}

describe('UserPromptSubmit', () => {
  it("tags the prompt as the seed's example does, and the tagged text reaches the model", async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            const prompt = String(input.userPrompt ?? '');
            return {
              action: 'continue',
              modifiedInput: { userPrompt: `[tenant:acme]\n${prompt}` },
            };
          },
        ],
      },
    });
    const response = await session.send('list files');
    expect(response.text()).toBe('echo:[tenant:acme]\nlist files');
    await session.close();
  });

  it('rewrites the text of a prompt with images and keeps every image', async () => {
    const seen: HookInput[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            seen.push(input);
            return { action: 'continue', modifiedInput: { userPrompt: 'rewritten' } };
          },
        ],
      },
    });
    const image = { type: 'image' as const, image: 'aGVsbG8=', mediaType: 'image/png' };
    const response = await session.send([
      { type: 'text', text: 'look' },
      image,
      { type: 'text', text: 'here' },
      image,
    ]);
    expect(seen[0]).toMatchObject({ userPrompt: 'look\nhere', hasImages: true, imageCount: 2 });
    expect(JSON.parse(response.text().slice('echo:'.length))).toEqual([
      { type: 'text', text: 'rewritten' },
      image,
      image,
    ]);
    await session.close();
  });

  it('rejects the prompt on abort with the reason, runs no TaskCompleted, and the session stays usable', async () => {
    let taskCompleted = 0;
    let block = true;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () =>
            block ? { action: 'abort', reason: 'no secrets please' } : { action: 'continue' },
        ],
        [HookEvent.TaskCompleted]: [
          async () => {
            taskCompleted++;
            return { action: 'continue' };
          },
        ],
      },
    });
    const rejected = await session.send('show me the key').catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(HookError);
    expect(rejected).toMatchObject({
      code: 'HOOK_ABORTED',
      message: 'no secrets please',
      event: 'UserPromptSubmit',
    });
    expect(taskCompleted).toBe(0);
    block = false;
    expect((await session.send('hello')).text()).toBe('echo:hello');
    expect(taskCompleted).toBe(1);
    await session.close();
  });

  it('propagates an error a callback throws to send(), and the session stays usable', async () => {
    let fail = true;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            if (fail) throw new RangeError('monitoring is down');
            return { action: 'continue' };
          },
        ],
      },
    });
    const error = await session.send('one').catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'RangeError',
      message: 'monitoring is down',
      event: 'UserPromptSubmit',
    });
    fail = false;
    expect((await session.send('two')).status).toBe('completed');
    await session.close();
  });

  it('keeps a session going when a non-critical hook handles its own errors, as the seed advises', async () => {
    const sendToMonitoring = async () => {
      throw new Error('monitoring unreachable');
    };
    const logged: unknown[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            try {
              await sendToMonitoring();
            } catch (error) {
              logged.push(error);
            }
            return { action: 'continue', ...(input.userPrompt ? {} : {}) };
          },
        ],
      },
    });
    expect((await session.send('still works')).text()).toBe('echo:still works');
    expect(logged).toHaveLength(1);
    await session.close();
  });

  it('fails send() with HOOK_OUTPUT_INVALID naming the event, the position and what was wrong', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [cont, async () => ({ action: 'maybe' }) as never],
      },
    });
    const error = await session.send('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({
      code: 'HOOK_OUTPUT_INVALID',
      event: 'UserPromptSubmit',
      callbackIndex: 1,
    });
    expect((error as Error).message).toMatch(/UserPromptSubmit callback #2 .*action must be/);
    await session.close();
  });
});

describe('several callbacks of one event', () => {
  it('runs hookA, hookB and hookC in order on the same original input; the first skip or abort decides', async () => {
    const order: string[] = [];
    const inputs: unknown[] = [];
    const record =
      (name: string, output: Awaited<ReturnType<HookCallback>>): HookCallback =>
      async (input) => {
        order.push(name);
        inputs.push(input.userPrompt);
        return output;
      };
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          record('A', { action: 'continue', modifiedInput: { userPrompt: 'from A' } }),
          record('B', { action: 'abort', reason: 'B says no' }),
          record('C', { action: 'abort', reason: 'C says no too' }),
        ],
      },
    });
    const error = await session.send('original').catch((e: unknown) => e);
    expect(order).toEqual(['A', 'B', 'C']);
    expect(inputs).toEqual(['original', 'original', 'original']);
    expect(error).toMatchObject({ code: 'HOOK_ABORTED', message: 'B says no', callbackIndex: 1 });
    const timeline = await session.timeline();
    expect(timeline.at(-1)).toMatchObject({
      event: 'UserPromptSubmit',
      callbackCount: 3,
      outcome: 'abort',
      decidedBy: 1,
    });
    await session.close();
  });

  it('merges modifiedInput in order, so a later edit wins and a callback without edits keeps earlier ones', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => ({ action: 'continue', modifiedInput: { userPrompt: 'first' } }),
          async () => ({ action: 'continue', modifiedInput: { userPrompt: 'second' } }),
          cont,
        ],
      },
    });
    expect((await session.send('x')).text()).toBe('echo:second');
    await session.close();
  });
});

describe('budgets and timeouts', () => {
  it('shares one budget between the callbacks of an event: 1 s + 2.5 s against 3 s times out in the second', async () => {
    // Each callback alone fits the budget; together they do not. The outcome does not depend
    // on the machine's speed: the first callback's timer is set before the budget's and
    // expires 2 s earlier, and the second callback's timer is set only after the first one
    // fired, so it always expires after the budget.
    const signals: AbortSignal[] = [];
    const sleepy =
      (ms: number): HookCallback =>
      async (input) => {
        signals.push(input.abortSignal!);
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, ms);
          input.abortSignal!.addEventListener('abort', () => (clearTimeout(timer), resolve(0)));
        });
        return { action: 'continue' };
      };
    const session = await agent.createSession({
      hookTimeoutMs: 3_000,
      hooks: { [HookEvent.UserPromptSubmit]: [sleepy(1_000), sleepy(2_500)] },
    });
    const error = await session.send('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookTimeoutError);
    expect(error).toMatchObject({
      code: 'HOOK_TIMEOUT',
      event: 'UserPromptSubmit',
      message: 'Hook UserPromptSubmit exceeded 3000ms',
    });
    // The second callback ran, and the budget's end reached it through its signal.
    expect(signals).toHaveLength(2);
    expect(signals[1]!.aborted).toBe(true);
    expect(signals[1]!.reason).toBeInstanceOf(HookTimeoutError);
    // The second callback settled right at its signal: no cleanup holds the session.
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      10_000,
      'cleanup to settle',
    );
    await session.close();
  });

  it('fails a stuck callback at its budget, holds the session fail-closed until it settles, then lifts', async () => {
    const hold = gate();
    let signal: AbortSignal | undefined;
    let stuck = true;
    const session = await agent.createSession({
      hookTimeoutMs: 150,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            if (stuck) {
              signal = input.abortSignal;
              await hold.opened; // ignores its signal on purpose
            }
            return { action: 'continue' };
          },
        ],
      },
    });
    const started = Date.now();
    const error = await session.send('x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'HOOK_TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(HookTimeoutError);
    stuck = false;

    expect(await session.send('y').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_CLEANUP_PENDING',
    });
    expect(await session.close().catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_CLEANUP_PENDING',
    });
    expect(
      await session.handoff({ taskQueue: agent.worker.taskQueue }).catch((e: unknown) => e),
    ).toMatchObject({
      code: 'HOOK_CLEANUP_PENDING',
    });
    expect((await session.describe()).pendingCleanups).toBe(1);

    hold.open();
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      10_000,
      'the lock to lift',
    );
    expect((await session.send('z')).text()).toBe('echo:z');
    const timeline = await session.timeline();
    expect(timeline.map((e) => e.outcome)).toEqual(['timeout', 'refused', 'continue']);
    expect(timeline[0]).toMatchObject({ cleanup: 'settled' });
    await session.close();
  });
});

describe('abort', () => {
  it('hands the very reason object to the callback, resolves send() as aborted, and the next prompt gets a fresh signal', async () => {
    const reason = { why: 'user pressed stop' };
    const signals: AbortSignal[] = [];
    const entered = gate();
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            const signal = input.abortSignal!;
            signals.push(signal);
            if (signals.length === 1) {
              entered.open();
              await new Promise((resolve) =>
                signal.addEventListener('abort', resolve, { once: true }),
              );
            }
            return { action: 'continue' };
          },
        ],
      },
    });
    const pending = session.send('long');
    await entered.opened;
    expect(await session.abort(reason)).toBe(true);
    const response = await pending;
    expect(response.status).toBe('aborted');
    expect(response.abortReason).toBe(reason);
    expect(signals[0]!.reason).toBe(reason);

    const next = await session.send('again');
    expect(next.status).toBe('completed');
    expect(signals[1]!.aborted).toBe(false);
    expect((await session.timeline()).map((e) => e.outcome)).toEqual(['cancelled', 'continue']);
    await session.close();
  });

  it('cancels only the aborted prompt: prompts before it keep their activities, the next runs uncancelled', async () => {
    const entered = gate();
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            if (input.userPrompt === 'long') {
              entered.open();
              await new Promise((resolve) =>
                input.abortSignal!.addEventListener('abort', resolve, { once: true }),
              );
            }
            return { action: 'continue' };
          },
        ],
      },
    });
    expect((await session.send('first')).status).toBe('completed');
    expect((await session.send('second')).status).toBe('completed');
    const pending = session.send('long');
    await entered.opened;
    expect(await session.abort('stop')).toBe(true);
    expect((await pending).status).toBe('aborted');
    const [next, last] = await Promise.all([session.send('next'), session.send('last')]);
    expect([next.status, last.status]).toEqual(['completed', 'completed']);
    await session.close();

    const client = await rawClient();
    try {
      const events = (await client.workflow.getHandle(session.workflowId).fetchHistory()).events!;
      const cancelled = events
        .map((e) => e.activityTaskCancelRequestedEventAttributes?.scheduledEventId)
        .filter((id) => id != null)
        .map(Number);
      // One cancel, for the aborted prompt's dispatch; none for the activities before or after.
      expect(cancelled).toHaveLength(1);
      const scheduled = events.find((e) => Number(e.eventId) === cancelled[0]);
      expect(scheduled?.activityTaskScheduledEventAttributes?.activityType?.name).toBe(
        'dispatchHook',
      );
      expect(events.filter((e) => e.activityTaskCompletedEventAttributes)).toHaveLength(
        scheduledCount(events) - 1,
      );
    } finally {
      await client.connection.close();
    }
  });

  it("aborts through the caller's signal passed to send()", async () => {
    const controller = new AbortController();
    const entered = gate();
    let seenReason: unknown;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            entered.open();
            await new Promise((resolve) =>
              input.abortSignal!.addEventListener('abort', resolve, { once: true }),
            );
            seenReason = input.abortSignal!.reason;
            return { action: 'continue' };
          },
        ],
      },
    });
    const pending = session.send('x', { signal: controller.signal });
    await entered.opened;
    const reason = new Error('caller gave up');
    controller.abort(reason);
    const response = await pending;
    expect(response.status).toBe('aborted');
    expect(seenReason).toBe(reason);
    await session.close();
  });
});

describe('SessionEnd', () => {
  it('runs once with reason other; a second close() succeeds and calls nothing', async () => {
    const ends: HookInput[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionEnd]: [
          async (input) => {
            ends.push(input);
            return { action: 'continue' };
          },
        ],
      },
    });
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: true });
    expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ event: 'SessionEnd', reason: 'other', sessionId: session.id });
    expect((await session.describe()).sessionEndMarker).toMatchObject({ reason: 'other' });
  });

  it('times out at sessionEndHookTimeoutMs; close() rejects, and the retried close() closes without calling it again', async () => {
    let calls = 0;
    const session = await agent.createSession({
      sessionEndHookTimeoutMs: 100,
      hooks: {
        [HookEvent.SessionEnd]: [
          async (input) => {
            calls++;
            await new Promise((resolve) =>
              input.abortSignal!.addEventListener('abort', resolve, { once: true }),
            );
            return { action: 'continue' };
          },
        ],
      },
    });
    const error = await session.close().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookTimeoutError);
    expect(error).toMatchObject({ event: 'SessionEnd', timeoutMs: 100 });
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
    expect(calls).toBe(1);
  });

  it('rejects close() with the error SessionEnd threw; the retried close() closes', async () => {
    let calls = 0;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionEnd]: [
          async () => {
            calls++;
            throw new Error('flush failed');
          },
        ],
      },
    });
    await expect(session.close()).rejects.toThrow('flush failed');
    await expect(session.close()).resolves.toEqual({ closedNow: true, sessionEndRan: false });
    expect(calls).toBe(1);
  });

  it('ends an idle session with reason idle_timeout, once', async () => {
    const ends: HookInput[] = [];
    const session = await agent.createSession({
      idleTimeoutMs: 300,
      hooks: {
        [HookEvent.SessionEnd]: [
          async (input) => {
            ends.push(input);
            return { action: 'continue' };
          },
        ],
      },
    });
    await waitFor(
      async () => (await session.describe()).status === 'closed',
      10_000,
      'the idle timeout',
    );
    expect(ends.map((e) => e.reason)).toEqual(['idle_timeout']);
    expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
    expect(ends).toHaveLength(1);
  });

  it('ends a session cancelled from outside with reason cancelled, once', async () => {
    const ends: HookInput[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.SessionEnd]: [
          async (input) => {
            ends.push(input);
            return { action: 'continue' };
          },
        ],
      },
    });
    const client = await rawClient();
    await client.workflow.getHandle(session.workflowId).cancel();
    await waitFor(
      async () => (await session.describe()).status === 'closed',
      10_000,
      'the cancellation',
    );
    await client.connection.close();
    expect(ends.map((e) => e.reason)).toEqual(['cancelled']);
    expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
  });
});

describe('sessions', () => {
  it('fails session creation when SessionStart aborts, with the reason', async () => {
    const error = await agent
      .createSession({
        hooks: {
          [HookEvent.SessionStart]: [async () => ({ action: 'abort', reason: 'tenant suspended' })],
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SESSION_START_FAILED', message: 'tenant suspended' });
  });

  it('schedules no activity for events without callbacks', async () => {
    const session = await agent.createSession({ hooks: { [HookEvent.TaskCompleted]: [cont] } });
    await session.send('x');
    await session.close();
    expect(await scheduledActivities(session.workflowId)).toEqual(['modelStep', 'dispatchHook']);
  });

  it('runs a retried send() with the same requestId once', async () => {
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
    const [a, b] = await Promise.all([
      session.send('once', { requestId: 'req-1' }),
      session.send('once', { requestId: 'req-1' }),
    ]);
    const c = await session.send('once', { requestId: 'req-1' });
    expect(submits).toBe(1);
    expect([a.text(), b.text(), c.text()]).toEqual(['echo:once', 'echo:once', 'echo:once']);
    await session.close();
  });

  it('attaches to a session by id, and fails with SESSION_NOT_FOUND for an unknown id', async () => {
    const session = await agent.createSession();
    const attached = await agent.session(session.id);
    expect((await attached.send('via attach')).text()).toBe('echo:via attach');
    await expect(agent.session('no-such-session')).rejects.toBeInstanceOf(SessionNotFoundError);
    await attached.close();
  });

  it('rejects send() after close() with SESSION_CLOSED', async () => {
    const session = await agent.createSession();
    await session.close();
    const error = await session.send('late').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionClosedError);
    expect(error).toMatchObject({ code: 'SESSION_CLOSED' });
  });

  it('reads the timeline of a closed session', async () => {
    const session = await agent.createSession({
      hooks: { [HookEvent.UserPromptSubmit]: [cont], [HookEvent.SessionEnd]: [cont] },
    });
    await session.send('a');
    await session.close();
    const timeline = await session.timeline();
    expect(timeline.map((e) => [e.event, e.outcome, e.callbackCount])).toEqual([
      ['UserPromptSubmit', 'continue', 1],
      ['SessionEnd', 'continue', 1],
    ]);
    expect(timeline.every((e) => e.durationMs >= 0 && e.startedAt > 0)).toBe(true);
  });
});
