/**
 * The harness's second slice, dogfooded: scripted tools that record their inputs, the input
 * and prompt assertions, vitest matchers, faults at named events (an abort, a budget
 * overrun), and sessions that continue as new (timeline and replay across runs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookEvent, type AgentOptions, type HookCallback } from '../../../src/index.js';
import {
  assertDecision,
  assertDispatched,
  assertModelPrompt,
  assertSessionStartEndOnce,
  assertToolInput,
  createHookTestEnv,
  hookMatchers,
  scriptedModel,
  scriptedTool,
  toolCall,
  type HookMatchers,
  type HookTestEnv,
} from '../../../src/testing/index.js';
import { waitFor } from '../../helpers/common.js';
import { withOtherWorkflowCode } from '../../helpers/replay.js';

expect.extend(hookMatchers);
declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Assertion<T> extends HookMatchers<T> {}
}

const allow: HookCallback = async () => ({ action: 'continue' });
const deploy = scriptedTool({ name: 'Deploy', kind: 'execute', results: ['deployed', 'again'] });
// PreToolUse pins every deploy to staging; UserPromptSubmit tags the prompt.
const pinStaging: HookCallback = async (input) =>
  input.toolName === 'Deploy'
    ? { action: 'continue', modifiedInput: { ...input.toolInput, env: 'staging' } }
    : { action: 'continue' };
const tag: HookCallback = async (input) => ({
  action: 'continue',
  modifiedInput: { userPrompt: `[team:ops] ${String(input.userPrompt ?? '')}` },
});
let audited = 0;
const audit: HookCallback = async () => {
  audited++;
  return { action: 'continue' };
};

/** The agent of this file's envs. */
function agent(): AgentOptions {
  return {
    model: scriptedModel((request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return 'done';
      const prompt = typeof request.prompt === 'string' ? request.prompt : '';
      return prompt.includes('deploy') ? toolCall('Deploy', { env: 'prod' }) : 'ok';
    }),
    tools: [deploy],
    advanced: {
      permission: 'bypass-permissions',
      // Longer than an abort takes to land under load (abortAt), and skipped at once by
      // exceedBudgetAt on the time-skipping server.
      hookTimeoutMs: 10_000,
      continueAsNewAfterPrompts: 2,
      hooks: {
        [HookEvent.SessionStart]: [allow],
        [HookEvent.UserPromptSubmit]: [tag, audit],
        [HookEvent.PreToolUse]: [pinStaging],
        [HookEvent.SessionEnd]: [allow],
      },
    },
  };
}

let env: HookTestEnv;
beforeAll(async () => {
  env = await createHookTestEnv({ agent: agent() });
});
afterAll(async () => {
  await env?.teardown();
});

describe('scripted tools and input assertions', () => {
  it('records what reached the tool after PreToolUse, and the prompt after UserPromptSubmit', async () => {
    const session = await env.createSession();
    const response = await session.send('please deploy');
    expect(response.text()).toBe('done');
    expect(deploy.calls.map((c) => c.input)).toContainEqual({ env: 'staging' });
    await assertToolInput(env, session, 'Deploy', { env: 'staging' });
    await assertModelPrompt(env, session, '[team:ops] please deploy');
    await expect(assertToolInput(env, session, 'Deploy', { env: 'prod' })).rejects.toThrow(
      /got another input[\s\S]*0: \{"env":"staging"\}/,
    );
    await expect(assertModelPrompt(env, session, /nothing/, { nth: 3 })).rejects.toThrow(
      `The 4th prompt that reached the model in session ${session.id} does not exist (1 time sent).`,
    );
    await session.close();
  });

  it('the vitest matchers pass and fail like the assertions', async () => {
    const session = await env.createSession();
    await session.send('hello');
    await session.close();
    await expect(session).toHaveDispatched(env, HookEvent.UserPromptSubmit, 1);
    await expect(session).toHaveRunSessionStartAndEndOnce(env);
    await expect(session).toNeverHaveRunTool(env, 'Deploy');
    await expect(session).toHaveSentModelPrompt(env, /^\[team:ops\] hello$/);
    await expect(
      expect(session).toHaveDispatched(env, HookEvent.UserPromptSubmit, 2),
    ).rejects.toThrow(/Expected UserPromptSubmit to be dispatched 2 times/);
  });
});

describe('faults at named events', () => {
  it('abortAt: the abort arrives while the named dispatch runs; the prompt ends aborted', async () => {
    const session = await env.createSession();
    const fault = env.abortAt(HookEvent.UserPromptSubmit, { reason: new Error('operator stop') });
    const response = await session.send('first');
    expect(fault.hasFired).toBe(true);
    expect(response.status).toBe('aborted');
    expect((response.abortReason as Error).message).toBe('operator stop');
    // The next prompt is not affected: a fault fires once.
    expect((await session.send('second')).status).toBe('completed');
    await session.close();
  });

  it('exceedBudgetAt: the dispatch times out, the session is fail-closed until the callback settles', async () => {
    const session = await env.createSession();
    // The overrun is the window in which the next send must find the session fail-closed:
    // wide enough that reading the decision from the history first fits in it under load.
    env.exceedBudgetAt(HookEvent.UserPromptSubmit, { occurrence: 1, overrunMs: 5_000 });
    await expect(session.send('slow')).rejects.toMatchObject({ code: 'HOOK_TIMEOUT' });
    await assertDecision(env, session, { event: HookEvent.UserPromptSubmit, action: 'timeout' });
    await expect(session.send('too soon')).rejects.toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 15_000, 'settle');
    expect((await session.send('later')).status).toBe('completed');
    await session.close();
  });

  it('lets two faults at one dispatch both act (whenDispatched and exceedBudgetAt)', async () => {
    const session = await env.createSession();
    const dispatched = env.whenDispatched(HookEvent.UserPromptSubmit);
    const fault = env.exceedBudgetAt(HookEvent.UserPromptSubmit, { overrunMs: 10 });
    await expect(session.send('both')).rejects.toMatchObject({ code: 'HOOK_TIMEOUT' });
    await dispatched;
    expect(fault.hasFired).toBe(true);
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 15_000, 'settle');
    await session.close();
  });

  it('refuses a fault at an event the agent has no callbacks for', () => {
    expect(() => env.whenDispatched(HookEvent.PostToolUseFailure)).toThrow(
      /The agent definition has no PostToolUseFailure callbacks, so PostToolUseFailure is never dispatched/,
    );
  });

  it('refuses an unknown event or a bad occurrence with a ConfigError', () => {
    expect(() => env.abortAt('Nope' as HookEvent)).toThrow(/Unknown hook event 'Nope'/);
    expect(() => env.exceedBudgetAt(HookEvent.PreToolUse, { occurrence: 0 })).toThrow(
      /occurrence must be a positive integer, got 0/,
    );
  });
});

describe('killWorkerAt', () => {
  it('kills the worker inside the named dispatch: worker_lost, the tool never runs, a new worker carries the session on', async () => {
    const ship = scriptedTool({ name: 'Ship', kind: 'execute', results: ['shipped'] });
    let preToolUseStarts = 0;
    const killEnv = await createHookTestEnv({
      server: 'dev',
      agent: {
        model: scriptedModel((request) => {
          if (request.messages.at(-1)?.role === 'tool') return 'done';
          return request.prompt === 'ship it' ? toolCall('Ship', {}) : 'ok';
        }),
        tools: [ship],
        advanced: {
          permission: 'bypass-permissions',
          temporal: { dispatchHeartbeatTimeoutMs: 1_000, heartbeatIntervalMs: 200 },
          hooks: {
            [HookEvent.SessionStart]: [allow],
            [HookEvent.PreToolUse]: [
              async () => {
                preToolUseStarts++;
                return { action: 'continue' };
              },
            ],
            [HookEvent.SessionEnd]: [allow],
          },
        },
      },
    });
    try {
      const session = await killEnv.createSession();
      const fault = killEnv.killWorkerAt(HookEvent.PreToolUse, { toolName: 'Ship' });
      const response = await session.send('ship it');
      expect(fault.hasFired).toBe(true);
      expect(killEnv.workerKills).toBe(1);
      expect(preToolUseStarts).toBe(1);
      expect(response.toolCalls.map((c) => c.status)).toEqual(['error']);
      expect(ship.calls).toHaveLength(0);
      await assertDecision(killEnv, session, {
        event: HookEvent.PreToolUse,
        toolName: 'Ship',
        action: 'worker_lost',
      });
      // The new worker replays the session from history and runs the next prompt.
      expect((await session.send('hello')).text()).toBe('ok');
      await session.close();
      await assertSessionStartEndOnce(killEnv, session);
    } finally {
      await killEnv.teardown();
    }
  });

  it('is refused on the time-skipping server, naming the way out', () => {
    expect(() => env.killWorkerAt(HookEvent.PreToolUse)).toThrow(
      /killWorkerAt needs server: 'dev' \(or an address\)/,
    );
  });
});

describe('sessions that continue as new', () => {
  it('timeline and assertions span every run', async () => {
    audited = 0;
    const session = await env.createSession();
    for (const prompt of ['a', 'b', 'c', 'd', 'e']) await session.send(prompt);
    await session.close();
    const runs = await env.histories(session);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    await assertDispatched(env, session, HookEvent.UserPromptSubmit, 5);
    await assertSessionStartEndOnce(env, session);
    const timeline = await env.timeline(session);
    expect(timeline.dispatches.map((d) => d.seq)).toEqual(timeline.dispatches.map((_, i) => i));
    // UserPromptSubmit's second callback ran once a prompt, in every run.
    expect(audited).toBe(5);
  });

  it('teardown replays each run: against workflow code that does not match them, it fails once per run', async () => {
    const own = await createHookTestEnv({ agent: agent() });
    const session = await own.createSession();
    for (const prompt of ['a', 'b', 'c', 'd', 'e']) await session.send(prompt);
    await session.close();
    const runs = await own.histories(session);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const error = await withOtherWorkflowCode(() =>
      own.teardown().then(
        () => new Error('teardown resolved'),
        (e: unknown) => e as Error,
      ),
    );
    expect(error.message).toContain(
      `${runs.length} session(s) did not replay against the current workflow code`,
    );
    const lines = error.message
      .split('\n')
      .filter((line) =>
        line.startsWith(`- session ${session.id} (workflow ${session.workflowId})`),
      );
    expect(lines).toHaveLength(runs.length);
    for (const line of lines) expect(line).toContain('nondeterministic replay');
  });
});
