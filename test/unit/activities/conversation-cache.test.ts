import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createModelActivities } from '../../../activities/model-step.js';
import { AgentRegistry } from '../../../src/definition/registry.js';
import { tailHash, type ContextStamp } from '../../../src/common/context-stamp.js';
import type { ConversationMessage } from '../../../src/common/conversation.js';
import type { ConversationPage } from '../../../src/common/messages.js';
import type {
  DispatchHookInput,
  HookDispatchOutcome,
  ModelStepInput,
} from '../../../src/common/activity-io.js';
import { ApplicationFailure } from '@temporalio/common';
import { ModelError } from '../../../src/common/errors.js';
import { ConversationCache } from '../../../activities/conversation-cache.js';
import { testIdentity } from '../../helpers/registry-identity.js';

const WF = 'session-s1';
const RUN = 'run-1';
const user = (text: string): ConversationMessage => ({ role: 'user', content: text });
const assistant = (text: string): ConversationMessage => ({
  role: 'assistant',
  text,
  toolCalls: [],
});

function stampOf(messages: ConversationMessage[], version: number, runId = RUN): ContextStamp {
  return { runId, version, length: messages.length, compacted: 0, tail: tailHash(messages) };
}

describe('ConversationCache', () => {
  it('uses a copy only when it matches the stamp exactly', () => {
    const cache = new ConversationCache();
    const v1 = [user('a')];
    cache.sync({ workflowId: WF, stamp: stampOf(v1, 1), messages: v1, prompt: 'a', chars: 10 });
    expect(cache.lookup(WF, stampOf(v1, 1))?.messages).toEqual(v1);
    // The workflow moved on (a newer version), or another run, or another last message:
    // the copy is older than the step's state and is not used.
    const v3 = [user('a'), assistant('b'), user('c')];
    expect(cache.lookup(WF, stampOf(v3, 3))).toBeUndefined();
    expect(cache.lookup(WF, stampOf(v1, 1, 'run-2'))).toBeUndefined();
    expect(cache.lookup(WF, { ...stampOf(v1, 1), tail: stampOf(v1, 1).tail + 1 })).toBeUndefined();
    expect(cache.lookup(WF, { ...stampOf(v1, 1), compacted: 1 })).toBeUndefined();
    expect(cache.lookup(WF, undefined)).toBeUndefined();
    expect(cache.stats).toMatchObject({ hits: 1, misses: 5 });
  });

  it('extends a copy with a delta only from the exact state the delta starts at', () => {
    const cache = new ConversationCache();
    const v1 = [user('a')];
    cache.sync({ workflowId: WF, stamp: stampOf(v1, 1), messages: v1, chars: 10 });
    const v3 = [...v1, assistant('b'), user('c')];
    cache.sync({
      workflowId: WF,
      stamp: stampOf(v3, 3),
      base: { version: 1, length: 1 },
      messages: v3.slice(1),
      chars: 30,
    });
    expect(cache.lookup(WF, stampOf(v3, 3))?.messages).toEqual(v3);
    // A delta from a state the copy is not at (a hand-over this worker never got): dropped.
    const v5 = [...v3, assistant('d'), user('e')];
    cache.sync({
      workflowId: WF,
      stamp: stampOf(v5, 5),
      base: { version: 4, length: 4 },
      messages: v5.slice(4),
      chars: 50,
    });
    expect(cache.lookup(WF, stampOf(v5, 5))).toBeUndefined();
    expect(cache.lookup(WF, stampOf(v3, 3))).toBeUndefined();
    expect(cache.stats.dropped).toBe(1);
  });

  it('keeps cached messages from being changed by a model that edits its request', () => {
    const cache = new ConversationCache();
    const v1 = [user('a')];
    cache.sync({ workflowId: WF, stamp: stampOf(v1, 1), messages: v1, chars: 10 });
    const got = cache.lookup(WF, stampOf(v1, 1))!;
    (got.messages as ConversationMessage[]).push(user('injected'));
    expect(() => ((got.messages[0] as { content: string }).content = 'x')).toThrow(TypeError);
    expect(cache.lookup(WF, stampOf(v1, 1))?.messages).toEqual([user('a')]);
  });

  it('evicts the least recently used session past its bound', () => {
    const cache = new ConversationCache({ maxSessions: 2 });
    const v1 = [user('a')];
    for (const id of ['x', 'y']) {
      cache.sync({ workflowId: id, stamp: stampOf(v1, 1), messages: v1, chars: 10 });
    }
    expect(cache.lookup('x', stampOf(v1, 1))).toBeDefined();
    cache.sync({ workflowId: 'z', stamp: stampOf(v1, 1), messages: v1, chars: 10 });
    expect(cache.size).toBe(2);
    expect(cache.lookup('y', stampOf(v1, 1))).toBeUndefined();
    expect(cache.lookup('x', stampOf(v1, 1))).toBeDefined();
  });

  it("drops a run's copy when that run ends, not a newer run's", async () => {
    const cache = new ConversationCache();
    const v1 = [user('a')];
    const sinks = cache.sinks().conversationCache;
    const info = (runId: string) =>
      ({ workflowId: WF, runId }) as Parameters<typeof sinks.forget.fn>[0];
    cache.sync({ workflowId: WF, stamp: stampOf(v1, 1, 'run-2'), messages: v1, chars: 10 });
    // The run before it (continued as new) ends after the new run handed over its context.
    await sinks.forget.fn(info(RUN));
    expect(cache.lookup(WF, stampOf(v1, 1, 'run-2'))).toBeDefined();
    await sinks.forget.fn(info('run-2'));
    expect(cache.size).toBe(0);
    expect(sinks.forget.callDuringReplay).toBe(false);
  });
});

describe('the modelStep activity with a conversation cache', () => {
  function setup(
    workflowState: ConversationMessage[],
    extra: {
      dispatchInline?: (input: DispatchHookInput) => Promise<HookDispatchOutcome>;
      fail?: () => Error;
    } = {},
  ) {
    const registry = new AgentRegistry();
    const seen: ConversationMessage[][] = [];
    registry.register({
      name: 'default',
      hooks: {},
      model: {
        name: 'x',
        step: async (request) => {
          seen.push([...request.messages]);
          if (extra.fail) throw extra.fail();
          return { text: 'ok', finishReason: 'stop' };
        },
      },
      tools: [],
      workspaceRoots: [],
      maxToolOutputBytes: 65_536,
      ...testIdentity,
    });
    let queries = 0;
    // The workflow's answer to the paged conversation query: its state now.
    const handle = {
      client: { connection: { withDeadline: (_d: number, fn: () => unknown) => fn() } },
      query: async (_q: unknown, from: number): Promise<ConversationPage> => {
        queries++;
        return { messages: workflowState.slice(from), next: null, prompt: 'c' };
      },
    };
    const client = {
      workflow: { getHandle: () => handle },
      withAbortSignal: (_s: AbortSignal, fn: () => unknown) => fn(),
    } as unknown as Client;
    const cache = new ConversationCache();
    const { modelStep } = createModelActivities({
      registry,
      conversationCache: cache,
      ...(extra.dispatchInline ? { dispatchInline: extra.dispatchInline } : {}),
    });
    const env = new MockActivityEnvironment(
      { workflowExecution: { workflowId: WF, runId: RUN } },
      { client },
    );
    const input = (context: ContextStamp): ModelStepInput => ({
      sessionId: 's1',
      agentName: 'default',
      requestId: 'r',
      step: 0,
      promptIndex: 0,
      modelStepIndex: 0,
      context,
    });
    return { cache, env, modelStep, input, seen, queries: () => queries };
  }

  it('never feeds a step a stale copy: an older cached version makes it query', async () => {
    const v1 = [user('a')];
    const v3 = [user('a'), assistant('b'), user('c')];
    const t = setup(v3);
    // The cache holds version 1; the step is stamped with version 3.
    t.cache.sync({ workflowId: WF, stamp: stampOf(v1, 1), messages: v1, chars: 10 });
    await t.env.run(t.modelStep, t.input(stampOf(v3, 3)));
    expect(t.seen).toEqual([v3]);
    expect(t.queries()).toBe(1);
    // The answer was kept: the same state's next read is a hit, with no query.
    await t.env.run(t.modelStep, t.input(stampOf(v3, 3)));
    expect(t.seen).toEqual([v3, v3]);
    expect(t.queries()).toBe(1);
  });

  it('reads a matching copy without a query', async () => {
    const v3 = [user('a'), assistant('b'), user('c')];
    const t = setup([user('the workflow says otherwise')]);
    t.cache.sync({ workflowId: WF, stamp: stampOf(v3, 3), messages: v3, prompt: 'c', chars: 30 });
    await t.env.run(t.modelStep, t.input(stampOf(v3, 3)));
    expect(t.seen).toEqual([v3]);
    expect(t.queries()).toBe(0);
  });

  describe('with an inline dispatch (ModelStepInput.hook)', () => {
    const hookInput: DispatchHookInput = {
      dispatchId: 'd1',
      sessionId: 's1',
      agentName: 'default',
      event: 'UserPromptSubmit',
      payload: { userPrompt: 'c' },
      budgetMs: 1000,
      callbackCount: 1,
    };
    const completed = (output: object): HookDispatchOutcome => ({
      status: 'completed',
      outputs: [{ action: 'continue', ...output }],
      callbackCount: 1,
      durationMs: 1,
    });
    /** The workflow holds a and b; the stamped context adds the prompt c it has not yet. */
    const before = [user('a'), assistant('b')];
    const stamped = [...before, user('c')];
    function inlineSetup(outcome: HookDispatchOutcome, fail?: () => Error) {
      const dispatched: DispatchHookInput[] = [];
      const t = setup(before, {
        dispatchInline: async (input) => {
          dispatched.push(input);
          return outcome;
        },
        ...(fail ? { fail } : {}),
      });
      const input = { ...t.input(stampOf(stamped, 3)), hook: hookInput };
      return { ...t, input, dispatched };
    }

    it('runs the callbacks, then the model on the exact cached copy, in one step', async () => {
      const outcome = completed({ reason: 'looked' });
      const t = inlineSetup(outcome);
      t.cache.sync({ workflowId: WF, stamp: stampOf(stamped, 3), messages: stamped, chars: 30 });
      const output = await t.env.run(t.modelStep, t.input);
      expect(t.dispatched).toEqual([hookInput]);
      expect(output).toEqual({ text: 'ok', finishReason: 'stop', hook: outcome });
      expect(t.seen).toEqual([stamped]);
      expect(t.queries()).toBe(0);
    });

    it('never queries for the stamped context (the workflow does not hold the prompt yet)', async () => {
      const outcome = completed({});
      const t = inlineSetup(outcome);
      // No copy, or an older one: the step ends after the callbacks.
      t.cache.sync({ workflowId: WF, stamp: stampOf(before, 2), messages: before, chars: 20 });
      const output = await t.env.run(t.modelStep, t.input);
      expect(output).toEqual({
        text: '',
        finishReason: 'other',
        hook: outcome,
        deferred: 'context',
      });
      expect(t.seen).toEqual([]);
      expect(t.queries()).toBe(0);
    });

    it('leaves a rewritten, refused or failed prompt to the workflow', async () => {
      const outcomes: HookDispatchOutcome[] = [
        completed({ modifiedInput: { userPrompt: 'C' } }),
        {
          status: 'completed',
          outputs: [{ action: 'abort', reason: 'no' }],
          callbackCount: 1,
          durationMs: 1,
        },
        {
          status: 'error',
          error: { name: 'Error', message: 'broke' },
          callbackIndex: 0,
          callbackCount: 1,
          durationMs: 1,
        },
      ];
      for (const outcome of outcomes) {
        const t = inlineSetup(outcome);
        t.cache.sync({ workflowId: WF, stamp: stampOf(stamped, 3), messages: stamped, chars: 30 });
        const output = await t.env.run(t.modelStep, t.input);
        expect(output).toEqual({
          text: '',
          finishReason: 'other',
          hook: outcome,
          deferred: 'hook',
        });
        expect(t.seen).toEqual([]);
      }
    });

    it("carries the callbacks' outcome on a model failure, keeping its retryability", async () => {
      const outcome = completed({});
      const run = async (fail: () => Error) => {
        const t = inlineSetup(outcome, fail);
        t.cache.sync({ workflowId: WF, stamp: stampOf(stamped, 3), messages: stamped, chars: 30 });
        return (await t.env
          .run(t.modelStep, t.input)
          .catch((e: unknown) => e)) as ApplicationFailure;
      };
      const ours = await run(() => new ModelError('bad request'));
      expect(ours).toBeInstanceOf(ApplicationFailure);
      expect(ours).toMatchObject({ type: 'ModelError', nonRetryable: true });
      expect(ours.details?.[0]).toMatchObject({ name: 'ModelError', message: 'bad request' });
      expect(ours.details?.at(-1)).toEqual({ inlineHook: outcome });
      const plain = await run(() => new TypeError('socket hang up'));
      expect(plain).toBeInstanceOf(ApplicationFailure);
      expect(plain).toMatchObject({
        type: 'TypeError',
        nonRetryable: false,
        message: 'socket hang up',
      });
      expect(plain.details).toEqual([null, { inlineHook: outcome }]);
    });
  });
});
