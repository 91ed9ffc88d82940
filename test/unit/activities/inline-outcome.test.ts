/**
 * What the workflow reads of an inline dispatch's failed model step (`inlineOutcomeOf`): the
 * callbacks' outcome from a failure's last detail, a cancellation's detail, or a timeout's
 * last heartbeat; nothing from a failure that carries none (the callbacks did not complete).
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TimeoutFailure,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { inlineOutcomeOf } from '../../../workflows/prompt/dispatch.js';
import { createModelActivities } from '../../../activities/model-step.js';
import { AgentRegistry } from '../../../src/definition/registry.js';
import { ConversationCache } from '../../../activities/conversation-cache.js';
import { tailHash } from '../../../src/common/context-stamp.js';
import type { HookDispatchOutcome, ModelStepInput } from '../../../src/common/activity-io.js';
import { testIdentity } from '../../helpers/registry-identity.js';

const outcome: HookDispatchOutcome = {
  status: 'completed',
  outputs: [{ action: 'continue' }],
  callbackCount: 1,
  durationMs: 1,
};
const failedStep = (cause: Error) =>
  new ActivityFailure('failed', 'modelStep', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'w', cause);

describe('inlineOutcomeOf', () => {
  it('reads the outcome a failed, cancelled or timed-out step carries', () => {
    const detail = { inlineHook: outcome };
    expect(
      inlineOutcomeOf(
        failedStep(ApplicationFailure.create({ message: 'x', details: [null, detail] })),
      ),
    ).toEqual(outcome);
    expect(inlineOutcomeOf(failedStep(new CancelledFailure('x', [detail])))).toEqual(outcome);
    expect(inlineOutcomeOf(failedStep(new TimeoutFailure('x', detail, 'START_TO_CLOSE')))).toEqual(
      outcome,
    );
  });

  it('reads nothing where the callbacks did not complete', () => {
    const handle = { settled: false, cleanupQueue: 'q', dispatchId: 'd' };
    expect(inlineOutcomeOf(failedStep(new CancelledFailure('x', [handle])))).toBeUndefined();
    expect(
      inlineOutcomeOf(failedStep(new TimeoutFailure('x', undefined, 'HEARTBEAT'))),
    ).toBeUndefined();
    expect(
      inlineOutcomeOf(failedStep(ApplicationFailure.create({ message: 'x' }))),
    ).toBeUndefined();
    expect(inlineOutcomeOf(new Error('x'))).toBeUndefined();
  });
});

/** A model step running an inline dispatch first (its callbacks decided `outcome`). */
function inlineStep(step: () => Promise<{ text: string; finishReason: 'stop' }>) {
  const registry = new AgentRegistry();
  registry.register({
    name: 'default',
    hooks: {},
    model: { name: 'held', step },
    tools: [],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    ...testIdentity,
  });
  const cache = new ConversationCache();
  const messages = [{ role: 'user' as const, content: 'c' }];
  const stamp = { runId: 'r', version: 1, length: 1, compacted: 0, tail: tailHash(messages) };
  cache.sync({ workflowId: 'w', stamp, messages, chars: 10 });
  const { modelStep } = createModelActivities({
    registry,
    conversationCache: cache,
    dispatchInline: async () => outcome,
  });
  const input: ModelStepInput = {
    sessionId: 's',
    agentName: 'default',
    requestId: 'q',
    step: 0,
    promptIndex: 0,
    modelStepIndex: 0,
    context: stamp,
    hook: {
      dispatchId: 'd',
      sessionId: 's',
      agentName: 'default',
      event: 'UserPromptSubmit',
      payload: {},
      budgetMs: 1000,
      callbackCount: 1,
    },
  };
  return { modelStep, input };
}

describe('an inline step calling its model', () => {
  it("heartbeats the callbacks' outcome, so a step that times out on its heartbeat still tells it", async () => {
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'w', runId: 'r' } });
    const beats: unknown[] = [];
    let secondBeat!: () => void;
    const twoBeats = new Promise<void>((resolve) => (secondBeat = resolve));
    env.on('heartbeat', (details: unknown) => {
      beats.push(details);
      if (beats.length === 2) secondBeat();
    });
    // The model answers only once the step heartbeat twice while it was called.
    const { modelStep, input } = inlineStep(async () => {
      await twoBeats;
      return { text: 'ok', finishReason: 'stop' };
    });
    expect(await env.run(modelStep, input)).toMatchObject({ text: 'ok', hook: outcome });
    expect(beats.every((b) => JSON.stringify(b) === JSON.stringify({ inlineHook: outcome }))).toBe(
      true,
    );
    // Had the worker died here, Temporal would time the step out with its last heartbeat.
    const timedOut = new TimeoutFailure('heartbeat timeout', beats.at(-1), 'HEARTBEAT');
    expect(inlineOutcomeOf(failedStep(timedOut))).toEqual(outcome);
  });

  it("a model that outlives the step's own deadline: the step times out carrying the callbacks' outcome", async () => {
    // The step ends itself 5 s before its start-to-close timeout: here 300 ms in.
    const env = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'w', runId: 'r' },
      startToCloseTimeoutMs: 5_300,
    });
    const { modelStep, input } = inlineStep(() => new Promise(() => undefined));
    const failure = await env.run(modelStep, input).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'ModelError',
      message: expect.stringContaining('The model did not answer within 300 ms'),
    });
    expect(inlineOutcomeOf(failedStep(failure as ApplicationFailure))).toEqual(outcome);
  });
});
