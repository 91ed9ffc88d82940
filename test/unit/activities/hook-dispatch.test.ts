import { ActivityCancelledError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it, vi } from 'vitest';
import { createHookActivities } from '../../../activities/hook-dispatch.js';
import { createActivities } from '../../../activities/index.js';
import { VERSION_REFUSAL_TYPE } from '../../../src/common/identity.js';
import { HookTimeoutError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import {
  HOOK_DISPATCH_LOST_TYPE,
  type CleanupHandle,
  type DispatchHookInput,
} from '../../../src/common/activity-io.js';
import type { HookCallback, HookInput, HookMap, HookOutput } from '../../../src/common/types.js';
import { AgentRegistry } from '../../../src/definition/registry.js';
import { recordingClient } from '../../helpers/recording-client.js';
import { testIdentity } from '../../helpers/registry-identity.js';

/** Upper bound of every wait in this file: generous, so a slow CI box does not flake. */
const WAIT_MS = 2_000;

function setup(hooks: HookMap) {
  const registry = new AgentRegistry();
  registry.register({
    name: 'default',
    hooks,
    model: { name: 'x', step: async () => ({ text: '', finishReason: 'stop' }) },
    tools: [],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    ...testIdentity,
  });
  const activities = createHookActivities({
    registry,
    cleanupQueue: 'cq',
    heartbeatIntervalMs: 20,
  });
  return { registry, ...activities };
}

/** Runs an activity in `env`, keeping its result type (`env.run` infers `unknown`). */
function runIn<A, R>(env: MockActivityEnvironment, fn: (arg: A) => Promise<R>, arg: A): Promise<R> {
  return env.run<[A], R, typeof fn>(fn, arg);
}

let dispatchSeq = 0;

function dispatchInput(
  event: HookEvent,
  overrides: Partial<DispatchHookInput> = {},
): DispatchHookInput {
  dispatchSeq += 1;
  return {
    dispatchId: `dispatch-${dispatchSeq}`,
    sessionId: 'session-1',
    agentName: 'default',
    event,
    payload: { toolName: 'Read', toolInput: { path: 'a.txt' }, toolUseId: 'tool-1' },
    budgetMs: WAIT_MS,
    callbackCount: 1,
    ...overrides,
  };
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A callback that records its signal, ignores it, and returns only when released. */
function stubbornCallback() {
  const started = deferred<AbortSignal>();
  const release = deferred<HookOutput>();
  const callback: HookCallback = async (input) => {
    started.resolve(input.abortSignal!);
    return release.promise;
  };
  return {
    callback,
    started: started.promise,
    release: () => release.resolve({ action: 'continue' }),
  };
}

/** A callback that rejects with its signal's reason as soon as the signal aborts. */
function obedientCallback() {
  const started = deferred<AbortSignal>();
  const callback: HookCallback = (input) => {
    const signal = input.abortSignal!;
    started.resolve(signal);
    return new Promise<HookOutput>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
    );
  };
  return { callback, started: started.promise };
}

const cont: HookCallback = async () => ({ action: 'continue' });

/** Resolves to what `promise` rejected with; fails when it fulfils. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('dispatchHook', () => {
  describe('callbacks that return', () => {
    it('runs the callbacks one at a time, in registration order', async () => {
      const log: string[] = [];
      const step =
        (i: number): HookCallback =>
        async () => {
          log.push(`start ${i}`);
          await new Promise((r) => setImmediate(r));
          log.push(`end ${i}`);
          return { action: 'continue' };
        };
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [step(0), step(1), step(2)] });
      const outcome = await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 3 }),
      );
      expect(outcome.status).toBe('completed');
      expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    });

    it('gives every callback the same input plus an AbortSignal', async () => {
      const inputs: HookInput[] = [];
      const record: HookCallback = async (input) => {
        inputs.push(input);
        return { action: 'continue', modifiedInput: { path: `edited-${inputs.length}` } };
      };
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [record, record] });
      await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { sessionId: 'session-7', callbackCount: 2 }),
      );
      expect(inputs).toHaveLength(2);
      for (const input of inputs) {
        const { abortSignal, ...rest } = input;
        expect(abortSignal).toBeInstanceOf(AbortSignal);
        expect(abortSignal?.aborted).toBe(false);
        expect(rest).toEqual({
          event: 'PreToolUse',
          sessionId: 'session-7',
          toolName: 'Read',
          toolInput: { path: 'a.txt' },
          toolUseId: 'tool-1',
        });
      }
    });

    it("does not let one callback's reassignment of an input field reach the next callback", async () => {
      const seen: unknown[] = [];
      const vandal: HookCallback = async (input) => {
        input.toolName = 'Bash';
        return { action: 'continue' };
      };
      const observer: HookCallback = async (input) => {
        seen.push(input.toolName);
        return { action: 'continue' };
      };
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [vandal, observer] });
      await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 2 }),
      );
      expect(seen).toEqual(['Read']);
    });

    it("does not let one callback's in-place edit of toolInput reach the next callback", async () => {
      const seen: unknown[] = [];
      const vandal: HookCallback = async (input) => {
        (input.toolInput as { path: string }).path = '/etc/passwd';
        return { action: 'continue' };
      };
      const observer: HookCallback = async (input) => {
        seen.push(input.toolInput);
        return { action: 'continue' };
      };
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [vandal, observer] });
      await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 2 }),
      );
      expect(seen).toEqual([{ path: 'a.txt' }]);
    });

    it("reports status 'completed' with each output validated, in order", async () => {
      const first: HookCallback = async () =>
        ({ action: 'continue', modifiedInput: { path: 'b.txt' }, extra: 'dropped' }) as HookOutput;
      const second: HookCallback = async () => ({ action: 'skip', reason: 'not today' });
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [first, second] });
      const outcome = await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 2 }),
      );
      // toEqual: the unknown field `extra` must be gone.
      expect(outcome).toEqual({
        status: 'completed',
        callbackCount: 2,
        durationMs: expect.any(Number),
        callbackDurationsMs: [expect.any(Number), expect.any(Number)],
        outputs: [
          { action: 'continue', modifiedInput: { path: 'b.txt' } },
          { action: 'skip', reason: 'not today' },
        ],
      });
    });
  });

  describe('callbacks that fail', () => {
    it("reports a thrown error as status 'error' with the callback's index, name and message", async () => {
      const ok: HookCallback = async () => ({ action: 'continue' });
      const boom: HookCallback = async () => {
        throw new TypeError('boom');
      };
      const { dispatchHook } = setup({ [HookEvent.PostToolUse]: [ok, boom] });
      const outcome = await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PostToolUse, { callbackCount: 2 }),
      );
      expect(outcome).toMatchObject({
        status: 'error',
        callbackIndex: 1,
        callbackCount: 2,
        error: { name: 'TypeError', message: 'boom', event: 'PostToolUse', callbackIndex: 1 },
      });
    });

    it('does not run the callbacks after one that throws', async () => {
      const later = vi.fn<HookCallback>(async () => ({ action: 'continue' }));
      const boom: HookCallback = async () => {
        throw new Error('boom');
      };
      const { dispatchHook } = setup({ [HookEvent.PostToolUse]: [boom, later, later] });
      const outcome = await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PostToolUse, { callbackCount: 3 }),
      );
      expect(outcome.status).toBe('error');
      expect(later).not.toHaveBeenCalled();
    });

    it("reports a malformed output as status 'error' coded HOOK_OUTPUT_INVALID", async () => {
      const ok: HookCallback = async () => ({ action: 'continue' });
      const malformed = (async () => ({ action: 'maybe' })) as unknown as HookCallback;
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [ok, malformed] });
      const outcome = await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 2 }),
      );
      expect(outcome).toMatchObject({
        status: 'error',
        callbackIndex: 1,
        error: { code: 'HOOK_OUTPUT_INVALID', event: 'PreToolUse', callbackIndex: 1 },
      });
    });

    it("reports no registered callbacks as status 'error' coded HOOK_CALLBACKS_MISSING", async () => {
      const { dispatchHook } = setup({
        [HookEvent.PostToolUse]: [async () => ({ action: 'continue' })],
      });
      const outcome = await runIn(
        new MockActivityEnvironment(),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 2 }),
      );
      expect(outcome).toMatchObject({
        status: 'error',
        callbackCount: 0,
        error: { code: 'HOOK_CALLBACKS_MISSING' },
      });
    });
  });

  describe('budget', () => {
    it("reports status 'timeout' soon after the budget, without waiting for a callback that ignores its signal", async () => {
      const stubborn = stubbornCallback();
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [stubborn.callback] });
      const input = dispatchInput(HookEvent.PreToolUse, { budgetMs: 50 });
      const started = performance.now();
      try {
        const outcome = await runIn(new MockActivityEnvironment(), dispatchHook, input);
        const took = performance.now() - started;
        expect(outcome).toMatchObject({
          status: 'timeout',
          settled: false,
          cleanupQueue: 'cq',
          dispatchId: input.dispatchId,
        });
        expect(took).toBeGreaterThanOrEqual(45);
        expect(took).toBeLessThan(1_000);
      } finally {
        stubborn.release();
      }
    });

    it('aborts the callback signal with a HookTimeoutError at the budget', async () => {
      const stubborn = stubbornCallback();
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [stubborn.callback] });
      try {
        await runIn(
          new MockActivityEnvironment(),
          dispatchHook,
          dispatchInput(HookEvent.PreToolUse, { budgetMs: 50 }),
        );
        const signal = await stubborn.started;
        expect(signal.aborted).toBe(true);
        expect(signal.reason).toBeInstanceOf(HookTimeoutError);
        expect(signal.reason).toMatchObject({
          code: 'HOOK_TIMEOUT',
          event: 'PreToolUse',
          timeoutMs: 50,
          message: 'Hook PreToolUse exceeded 50ms',
        });
      } finally {
        stubborn.release();
      }
    });

    it('keeps the dispatch in pendingCleanups until the callback settles, then drops it', async () => {
      const stubborn = stubbornCallback();
      const { dispatchHook, registry } = setup({ [HookEvent.PreToolUse]: [stubborn.callback] });
      const input = dispatchInput(HookEvent.PreToolUse, { budgetMs: 50 });
      try {
        await runIn(new MockActivityEnvironment(), dispatchHook, input);
        expect(registry.pendingCleanups.has(input.dispatchId)).toBe(true);
      } finally {
        stubborn.release();
      }
      await vi.waitFor(() => expect(registry.pendingCleanups.has(input.dispatchId)).toBe(false), {
        timeout: WAIT_MS,
      });
    });

    it('does not run later callbacks once the budget ran out', async () => {
      const stubborn = stubbornCallback();
      const later = vi.fn<HookCallback>(async () => ({ action: 'continue' }));
      const { dispatchHook, registry } = setup({
        [HookEvent.PreToolUse]: [stubborn.callback, later],
      });
      const input = dispatchInput(HookEvent.PreToolUse, { budgetMs: 50, callbackCount: 2 });
      try {
        const outcome = await runIn(new MockActivityEnvironment(), dispatchHook, input);
        expect(outcome.status).toBe('timeout');
      } finally {
        stubborn.release();
      }
      // Once the stubborn callback settles, the dispatch's cleanup is over.
      await vi.waitFor(() => expect(registry.pendingCleanups.has(input.dispatchId)).toBe(false), {
        timeout: WAIT_MS,
      });
      expect(later).not.toHaveBeenCalled();
    });

    it('reports settled: true and tracks nothing when the callback honours its signal', async () => {
      const obedient = obedientCallback();
      const { dispatchHook, registry } = setup({ [HookEvent.PreToolUse]: [obedient.callback] });
      const input = dispatchInput(HookEvent.PreToolUse, { budgetMs: 50 });
      const outcome = await runIn(new MockActivityEnvironment(), dispatchHook, input);
      expect(outcome).toMatchObject({
        status: 'timeout',
        settled: true,
        dispatchId: input.dispatchId,
      });
      expect(registry.pendingCleanups.size).toBe(0);
    });
  });

  describe('heartbeats', () => {
    it('heartbeats repeatedly while a slow callback runs', async () => {
      const env = new MockActivityEnvironment();
      let beats = 0;
      const thirdBeat = deferred<void>();
      env.on('heartbeat', () => {
        beats += 1;
        if (beats === 3) thirdBeat.resolve();
      });
      // Returns only after three heartbeats: they can only come from the dispatch's own timer.
      const slow: HookCallback = async () => {
        await thirdBeat.promise;
        return { action: 'continue' };
      };
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [slow] });
      const outcome = await runIn(env, dispatchHook, dispatchInput(HookEvent.PreToolUse));
      expect(outcome.status).toBe('completed');
      expect(beats).toBeGreaterThan(1);
    });

    it('does not heartbeat as a local activity (hookDispatch: local), which cannot', async () => {
      const env = new MockActivityEnvironment({ isLocal: true });
      let beats = 0;
      env.on('heartbeat', () => (beats += 1));
      // Ten heartbeat intervals: a remote dispatch beats several times meanwhile (test above).
      const slow: HookCallback = async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { action: 'continue' };
      };
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [slow] });
      const outcome = await runIn(env, dispatchHook, dispatchInput(HookEvent.PreToolUse));
      expect(outcome.status).toBe('completed');
      expect(beats).toBe(0);
    });
  });

  describe('cancellation', () => {
    it('throws a CancelledFailure carrying the cleanup handle and aborts the callback signal', async () => {
      const stubborn = stubbornCallback();
      const { dispatchHook, registry } = setup({ [HookEvent.PreToolUse]: [stubborn.callback] });
      const env = new MockActivityEnvironment();
      const input = dispatchInput(HookEvent.PreToolUse);
      try {
        const running = runIn(env, dispatchHook, input);
        const signal = await stubborn.started;
        env.cancel();
        const error = await rejectionOf(running);
        expect(error).toBeInstanceOf(CancelledFailure);
        const handle = (error as CancelledFailure).details[0] as CleanupHandle;
        expect(handle).toEqual({
          settled: false,
          cleanupQueue: 'cq',
          dispatchId: input.dispatchId,
        });
        expect(signal.aborted).toBe(true);
        expect(registry.pendingCleanups.has(input.dispatchId)).toBe(true);
      } finally {
        stubborn.release();
      }
    });

    it('reports settled: true in the handle when the callback honours its signal', async () => {
      const obedient = obedientCallback();
      const { dispatchHook, registry } = setup({ [HookEvent.PreToolUse]: [obedient.callback] });
      const env = new MockActivityEnvironment();
      const input = dispatchInput(HookEvent.PreToolUse);
      const running = runIn(env, dispatchHook, input);
      const signal = await obedient.started;
      env.cancel();
      const error = await rejectionOf(running);
      expect(error).toBeInstanceOf(CancelledFailure);
      expect((error as CancelledFailure).details[0]).toEqual({
        settled: true,
        cleanupQueue: 'cq',
        dispatchId: input.dispatchId,
      });
      expect(signal.aborted).toBe(true);
      expect(registry.pendingCleanups.size).toBe(0);
    });
  });

  describe('the worker log', () => {
    /** A logger keeping every line, as the activity context hands them on. */
    function capture() {
      const lines: Array<{ level: string; message: string; meta: Record<string, unknown> }> = [];
      const keep =
        (level: string) =>
        (message: string, meta: Record<string, unknown> = {}) =>
          lines.push({ level, message, meta });
      const logger: Logger = {
        log: (level, message, meta) => keep(level)(message, meta),
        trace: keep('TRACE'),
        debug: keep('DEBUG'),
        info: keep('INFO'),
        warn: keep('WARN'),
        error: keep('ERROR'),
      };
      return { lines, env: new MockActivityEnvironment({}, { logger }) };
    }

    const failing: Array<[string, HookCallback, string, RegExp]> = [
      [
        'throws',
        async () => {
          throw new Error('audit log down');
        },
        'HOOK_CALLBACK_FAILED',
        /audit log down/,
      ],
      [
        'returns undefined',
        async () => undefined as unknown as HookOutput,
        'HOOK_OUTPUT_INVALID',
        /returned a malformed output: .*got undefined/,
      ],
      [
        "returns { action: 'block' }",
        async () => ({ action: 'block' }) as unknown as HookOutput,
        'HOOK_OUTPUT_INVALID',
        /action/,
      ],
    ];
    it.each(failing)(
      'a callback that %s: one WARN line naming event, callback, agent, session, code and message',
      async (_, bad, code, message) => {
        const { dispatchHook } = setup({ [HookEvent.PostToolUse]: [cont, bad] });
        const { lines, env } = capture();
        const outcome = await runIn(
          env,
          dispatchHook,
          dispatchInput(HookEvent.PostToolUse, { callbackCount: 2, sessionId: 'session-9' }),
        );
        expect(outcome.status).toBe('error');
        const warnings = lines.filter((l) => l.level === 'WARN');
        expect(warnings).toHaveLength(1);
        const line = warnings[0]!;
        expect(line.message).toMatch(
          new RegExp(
            `^Hook PostToolUse callback #2 \\(tool Read\\) failed in session 'session-9' of agent 'default': ${code}: `,
          ),
        );
        expect(line.message).toMatch(message);
        expect(line.message).not.toContain('\n');
        expect(line.meta).toMatchObject({
          event: 'PostToolUse',
          callbackIndex: 1,
          agentName: 'default',
          sessionId: 'session-9',
          toolName: 'Read',
          toolUseId: 'tool-1',
          code,
          errorMessage: expect.stringMatching(message),
        });
      },
    );

    it('a dispatch that times out: one WARN line with HOOK_TIMEOUT and the callback that was running', async () => {
      const obedient = obedientCallback();
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [cont, obedient.callback] });
      const { lines, env } = capture();
      const outcome = await runIn(
        env,
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse, { callbackCount: 2, budgetMs: 30 }),
      );
      expect(outcome).toMatchObject({ status: 'timeout', callbackIndex: 1 });
      const warnings = lines.filter((l) => l.level === 'WARN');
      expect(warnings.map((l) => l.message)).toEqual([
        "Hook PreToolUse callback #2 (tool Read) failed in session 'session-1' of agent 'default': HOOK_TIMEOUT: Hook PreToolUse exceeded 30ms",
      ]);
      expect(warnings[0]!.meta).toMatchObject({ code: 'HOOK_TIMEOUT', callbackIndex: 1 });
    });

    it('a dispatch whose callbacks all return logs nothing', async () => {
      const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [cont] });
      const { lines, env } = capture();
      const outcome = await runIn(env, dispatchHook, dispatchInput(HookEvent.PreToolUse));
      expect(outcome.status).toBe('completed');
      expect(lines.filter((l) => l.level === 'WARN' || l.level === 'ERROR')).toEqual([]);
    });
  });
});

describe('awaitHookSettled', () => {
  it("resolves 'settled' once a timed-out callback settles", async () => {
    const stubborn = stubbornCallback();
    const { dispatchHook, awaitHookSettled } = setup({
      [HookEvent.PreToolUse]: [stubborn.callback],
    });
    const input = dispatchInput(HookEvent.PreToolUse, { budgetMs: 50 });
    let waiting: Promise<'settled' | 'unknown'> | undefined;
    try {
      await runIn(new MockActivityEnvironment(), dispatchHook, input);
      waiting = runIn(new MockActivityEnvironment(), awaitHookSettled, {
        dispatchId: input.dispatchId,
      });
      // Still waiting while the callback has not settled.
      const early = await Promise.race([
        waiting,
        new Promise<'pending'>((r) => setImmediate(() => r('pending'))),
      ]);
      expect(early).toBe('pending');
    } finally {
      stubborn.release();
    }
    const result = await Promise.race([
      waiting,
      new Promise<'timed out'>((r) => setTimeout(() => r('timed out'), WAIT_MS)),
    ]);
    expect(result).toBe('settled');
  });

  it("resolves 'unknown' for a dispatch id it does not hold", async () => {
    const { awaitHookSettled } = setup({});
    const result = await runIn(new MockActivityEnvironment(), awaitHookSettled, {
      dispatchId: 'no-such-dispatch',
    });
    expect(result).toBe('unknown');
  });
});

describe('dispatchHook attempts (the began record)', () => {
  /** A `dispatchHook` task from the task queue (not inline, not local). */
  const own = { activityType: 'dispatchHook' };

  /** A PreToolUse callback that logs `callback` each time it runs, and continues. */
  function loggedCallback(log: string[]): HookCallback {
    return async () => {
      log.push('callback');
      return { action: 'continue' };
    };
  }

  it('records that it began, confirmed, before the first callback, and heartbeats carry it', async () => {
    const log: string[] = [];
    const heartbeats: unknown[] = [];
    const callback: HookCallback = async () => {
      log.push('callback');
      // Long enough for the 20 ms heartbeat timer to fire.
      await new Promise((r) => setTimeout(r, 100));
      return { action: 'continue' };
    };
    const { dispatchHook } = setup({ [HookEvent.PreToolUse]: [callback] });
    const env = new MockActivityEnvironment(own, { client: recordingClient(log) });
    env.on('heartbeat', (details: unknown) => heartbeats.push(details));
    const input = dispatchInput(HookEvent.PreToolUse);
    const outcome = await runIn(env, dispatchHook, input);
    expect(outcome.status).toBe('completed');
    expect(log).toEqual([`record {"began":"${input.dispatchId}"}`, 'recorded', 'callback']);
    expect(heartbeats.length).toBeGreaterThan(0);
    for (const details of heartbeats) expect(details).toEqual({ began: input.dispatchId });
  });

  it('runs no callback when the server does not confirm the record, and may be retried', async () => {
    const log: string[] = [];
    const { dispatchHook } = setup({
      [HookEvent.PreToolUse]: [loggedCallback(log)],
    });
    const client = recordingClient(log, async () => {
      throw new Error('14 UNAVAILABLE: connection refused');
    });
    const error = await rejectionOf(
      runIn(
        new MockActivityEnvironment(own, { client }),
        dispatchHook,
        dispatchInput(HookEvent.PreToolUse),
      ),
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).nonRetryable).toBe(false);
    expect((error as ApplicationFailure).message).toMatch(
      /could not record its start \(nothing ran\)/,
    );
    expect(log.filter((line) => line === 'callback')).toEqual([]);
  });

  it('a later attempt whose earlier one began fails as lost without running a callback', async () => {
    const log: string[] = [];
    const { dispatchHook } = setup({
      [HookEvent.PreToolUse]: [loggedCallback(log)],
    });
    const input = dispatchInput(HookEvent.PreToolUse);
    const error = await rejectionOf(
      runIn(
        new MockActivityEnvironment(
          { ...own, attempt: 2, heartbeatDetails: { began: input.dispatchId } },
          { client: recordingClient(log) },
        ),
        dispatchHook,
        input,
      ),
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe(HOOK_DISPATCH_LOST_TYPE);
    expect((error as ApplicationFailure).nonRetryable).toBe(true);
    expect(log).toEqual([]);
  });

  it('sends the record again when its reply is lost, then runs the callbacks once', async () => {
    const log: string[] = [];
    let replies = 0;
    const { dispatchHook } = setup({
      [HookEvent.PreToolUse]: [loggedCallback(log)],
    });
    const client = recordingClient(log, async () => {
      replies += 1;
      if (replies === 1) throw new Error('4 DEADLINE_EXCEEDED: reply lost');
    });
    const input = dispatchInput(HookEvent.PreToolUse);
    const outcome = await runIn(new MockActivityEnvironment(own, { client }), dispatchHook, input);
    expect(outcome.status).toBe('completed');
    const record = `record {"began":"${input.dispatchId}"}`;
    expect(log).toEqual([record, record, 'recorded', 'callback']);
  });

  it('a cancel reported by the record ends as a cancellation the worker knows of', async () => {
    const log: string[] = [];
    const { dispatchHook } = setup({
      [HookEvent.PreToolUse]: [loggedCallback(log)],
    });
    const client = recordingClient(log, async () => {
      throw new ActivityCancelledError('cancel requested');
    });
    const env = new MockActivityEnvironment(own, { client });
    const input = dispatchInput(HookEvent.PreToolUse);
    // The worker learns of a cancel from a heartbeat's answer: one heartbeat must be sent.
    env.on('heartbeat', (details: unknown) => {
      log.push(`heartbeat ${JSON.stringify(details)}`);
      env.cancel('CANCELLED');
    });
    const error = await rejectionOf(runIn(env, dispatchHook, input));
    expect(error).toBeInstanceOf(CancelledFailure);
    expect(log).toEqual([
      `record {"began":"${input.dispatchId}"}`,
      `heartbeat {"began":"${input.dispatchId}"}`,
    ]);
  });

  it('a later attempt whose earlier one began is lost, not refused, on a worker of another version', async () => {
    const log: string[] = [];
    const { registry } = setup({
      [HookEvent.PreToolUse]: [loggedCallback(log)],
    });
    const { dispatchHook } = createActivities({
      registry,
      cleanupQueue: 'cq',
      heartbeatIntervalMs: 20,
      payloadStore: {} as never,
    });
    const input = dispatchInput(HookEvent.PreToolUse, {
      version: 'another-version',
      fingerprint: '0123456789abcdef',
    });
    // Refused, the workflow would schedule the dispatch again as a new activity (attempt 1,
    // no record), and a worker of the session's version would run the callbacks twice.
    const lost = await rejectionOf(
      runIn(
        new MockActivityEnvironment(
          { ...own, attempt: 2, heartbeatDetails: { began: input.dispatchId } },
          { client: recordingClient(log) },
        ),
        dispatchHook,
        input,
      ),
    );
    expect((lost as ApplicationFailure).type).toBe(HOOK_DISPATCH_LOST_TYPE);
    // The same task at attempt 1 is refused for its version: the check the loss came before.
    const refused = await rejectionOf(
      runIn(
        new MockActivityEnvironment(own, { client: recordingClient(log) }),
        dispatchHook,
        input,
      ),
    );
    expect((refused as ApplicationFailure).type).toBe(VERSION_REFUSAL_TYPE);
    expect(log).toEqual([]);
  });

  it('a later attempt whose earlier ones never began runs the callbacks', async () => {
    const log: string[] = [];
    const { dispatchHook } = setup({
      [HookEvent.PreToolUse]: [loggedCallback(log)],
    });
    const input = dispatchInput(HookEvent.PreToolUse);
    const outcome = await runIn(
      new MockActivityEnvironment({ ...own, attempt: 3 }, { client: recordingClient(log) }),
      dispatchHook,
      input,
    );
    expect(outcome.status).toBe('completed');
    expect(log).toEqual([`record {"began":"${input.dispatchId}"}`, 'recorded', 'callback']);
  });

  it('a failure after the callbacks began is final (non-retryable), its message kept', async () => {
    let ran = false;
    const { dispatchHook, registry } = setup({
      [HookEvent.PostToolUse]: [
        async () => {
          ran = true;
          return { action: 'continue' };
        },
      ],
    });
    // The tool output bound reads the agent after the callbacks: make that read throw.
    const agent = registry.agent.bind(registry);
    registry.agent = (...args: Parameters<typeof registry.agent>) => {
      if (ran) throw new Error('agent lookup broke');
      return agent(...args);
    };
    const error = await rejectionOf(
      runIn(
        new MockActivityEnvironment(own, { client: recordingClient([]) }),
        dispatchHook,
        dispatchInput(HookEvent.PostToolUse, {
          payload: { toolName: 'Read', toolOutput: 'x', toolUseId: 't' },
        }),
      ),
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).nonRetryable).toBe(true);
    expect((error as ApplicationFailure).message).toBe('agent lookup broke');
  });

  it('inline, in a model step: records nothing, and a retried step runs the callbacks again (at-least-once)', async () => {
    const log: string[] = [];
    const { dispatchHook } = setup({
      [HookEvent.UserPromptSubmit]: [
        async () => {
          log.push('callback');
          return { action: 'continue' };
        },
      ],
    });
    const input = dispatchInput(HookEvent.UserPromptSubmit);
    const outcome = await runIn(
      new MockActivityEnvironment(
        { activityType: 'modelStep', attempt: 2, heartbeatDetails: { began: input.dispatchId } },
        { client: recordingClient(log) },
      ),
      dispatchHook,
      input,
    );
    expect(outcome.status).toBe('completed');
    expect(log).toEqual(['callback']);
  });
});
