/**
 * `hookDispatch: { UserPromptSubmit: 'inline' }` (issue 19, item 3): the callbacks run inside
 * the send's first model step, which calls the model in the same activity when they leave the
 * prompt as it is. What must hold, against the ordinary dispatch of the same session: the same
 * decisions, failures and timeline rows (marked `inline`), the model never sees a prompt the
 * callbacks rejected or the text they replaced, the conversation cache never feeds a step a
 * context the workflow does not hold, and `abort()` and the budget reach the callbacks.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  HookEvent,
  type Agent,
  ModelError,
  type AgentOptions,
  type ConversationMessage,
  type SendResponse,
} from '../../../src/index.js';
import { scriptedModel, type ScriptedModel } from '../../../src/testing/index.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { comparableRow, historyOf } from '../../helpers/history.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

/** The text of the newest user message a request carries. */
function lastUserText(messages: readonly ConversationMessage[]): string {
  const last = messages.filter((m) => m.role === 'user').at(-1);
  return last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
}

/** `tool` asks for one Read, then answers; anything else is answered at once. */
const newModel = () =>
  scriptedModel((request) => {
    const text = lastUserText(request.messages);
    if (text.startsWith('tool') && request.step === 0) {
      return { toolCalls: [{ toolName: 'Read', input: { file_path: 'missing.txt' } }] };
    }
    return `reply to ${text} after ${request.messages.length} messages`;
  });

/** What the callbacks saw, in order. */
type Calls = string[];

function hooksFor(calls: Calls): NonNullable<AgentOptions['advanced']>['hooks'] {
  return {
    [HookEvent.UserPromptSubmit]: [
      async (input) => {
        const prompt = String(input.userPrompt);
        calls.push(`submit ${prompt}`);
        if (prompt.includes('refuse')) return { action: 'abort', reason: 'refused by policy' };
        if (prompt.includes('throw')) throw new Error('the check broke');
        if (prompt.includes('wait')) {
          await new Promise((resolve) =>
            input.abortSignal!.addEventListener('abort', resolve, { once: true }),
          );
          const reason = input.abortSignal!.reason as Error;
          calls.push(`aborted ${reason?.message}`);
          return { action: 'continue' };
        }
        if (prompt.includes('shout')) {
          return { action: 'continue', modifiedInput: { userPrompt: prompt.toUpperCase() } };
        }
        return { action: 'continue', reason: 'looked' };
      },
    ],
  };
}

async function agentWith(
  hookDispatch: AgentOptions['advanced'] extends infer A
    ? A extends { hookDispatch?: infer H }
      ? H | undefined
      : never
    : never,
  calls: Calls,
  model: ScriptedModel = newModel(),
  taskQueue = uniqueTaskQueue('inline'),
): Promise<Agent> {
  const agent = await createAgent({
    model,
    advanced: {
      ...(hookDispatch ? { hookDispatch } : {}),
      hookTimeoutMs: 1_500,
      hooks: hooksFor(calls),
      temporal: { address: temporalAddress(), taskQueue },
    },
  });
  agents.push(agent);
  return agent;
}

/** The activity types scheduled, in order, and how many local activities ran. */
async function activitiesOf(workflowId: string) {
  const events = (await historyOf(workflowId)).events ?? [];
  return {
    scheduled: events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => typeof n === 'string'),
    // Local activities that ran a dispatch (a marker naming dispatchHook).
    markers: events.filter((e) => {
      const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
      return data && Buffer.from(data).toString('utf8').includes('dispatchHook');
    }).length,
  };
}

const inline = { UserPromptSubmit: 'inline' } as const;

describe("hookDispatch: { UserPromptSubmit: 'inline' }", () => {
  it('runs the callbacks in the first model step: no activity or local activity of their own', async () => {
    const calls: Calls = [];
    const model = newModel();
    const agent = await agentWith(inline, calls, model);
    const session = await agent.createSession();
    expect((await session.send('hello')).text()).toBe('reply to hello after 1 messages');
    // A tool call: the steps after the inline one read the context the workflow holds.
    expect((await session.send('tool please')).text()).toBe(
      'reply to tool please after 5 messages',
    );
    expect(calls).toEqual(['submit hello', 'submit tool please']);
    const { scheduled, markers } = await activitiesOf(session.workflowId);
    expect(scheduled.filter((n) => n !== 'executeTool' && n !== 'checkPermission')).toEqual([
      'modelStep',
      'modelStep',
      'modelStep',
    ]);
    expect(scheduled).not.toContain('dispatchHook');
    expect(markers).toBe(0);
    // The model saw each prompt once, as the last user message, and every step the whole context.
    expect(model.requests.map((r) => [r.modelStepIndex, r.messages.length, r.prompt])).toEqual([
      [0, 1, 'hello'],
      [1, 3, 'tool please'],
      [2, 5, undefined],
    ]);
    expect(await session.conversation()).toEqual(
      model.requests[2]!.messages.concat([
        { role: 'assistant', text: 'reply to tool please after 5 messages', toolCalls: [] },
      ]),
    );
    // The live timeline and the history's both show the dispatches.
    expect((await session.timeline()).map((e) => [e.event, e.outcome, e.pending])).toEqual([
      ['UserPromptSubmit', 'continue', undefined],
      ['UserPromptSubmit', 'continue', undefined],
    ]);
    await session.close();
    const timeline = timelineFromHistory(await historyOf(session.workflowId));
    expect(timeline.dispatches).toHaveLength(2);
    expect(timeline.dispatches[0]).toMatchObject({
      event: 'UserPromptSubmit',
      decision: 'continue',
      inline: true,
      callbackCount: 1,
      callbacks: [{ index: 0, action: 'continue', reason: 'looked' }],
    });
    expect(timeline.prompts.map((p) => p.dispatches)).toEqual([[0], [1]]);
    expect(timeline.toolCalls).toHaveLength(1);
  }, 60_000);

  it('decides as the ordinary dispatch does: a rewrite reaches the model, a refusal never does', async () => {
    const run = async (hookDispatch: typeof inline | undefined) => {
      const calls: Calls = [];
      const model = newModel();
      const agent = await agentWith(hookDispatch, calls, model);
      const session = await agent.createSession({ sessionId: `inline-${randomUUID()}` });
      const texts = [
        (await session.send('shout this')).text(),
        await session.send('please refuse').catch((e: unknown) => e),
        (await session.send('fine')).text(),
        await session.send('throw now').catch((e: unknown) => e),
        (await session.send('tool again')).text(),
      ];
      const conversation = await session.conversation();
      await session.close();
      return {
        texts,
        calls,
        requests: model.requests.map((r) => ({
          step: r.modelStepIndex,
          prompt: r.prompt,
          messages: r.messages,
        })),
        conversation,
        timeline: timelineFromHistory(await historyOf(session.workflowId)),
        activities: await activitiesOf(session.workflowId),
      };
    };
    const [ours, ordinary] = await Promise.all([run(inline), run(undefined)]);
    expect(ours.texts[0]).toBe('reply to SHOUT THIS after 1 messages');
    expect(ours.texts[1]).toMatchObject({
      code: 'HOOK_ABORTED',
      message: 'refused by policy',
      event: 'UserPromptSubmit',
    });
    expect(ours.texts[3]).toMatchObject({ event: 'UserPromptSubmit' });
    // Same results, errors, callbacks, model requests (indexes too) and conversation.
    const errorOf = (value: unknown) =>
      value instanceof Error
        ? { name: value.name, message: value.message, code: (value as { code?: unknown }).code }
        : value;
    expect(ours.texts.map(errorOf)).toEqual(ordinary.texts.map(errorOf));
    expect(ours.calls).toEqual(ordinary.calls);
    expect(ours.requests).toEqual(ordinary.requests);
    expect(ours.conversation).toEqual(ordinary.conversation);
    expect(ours.conversation.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'SHOUT THIS',
      'fine',
      'tool again',
    ]);
    // The same rows, each marked inline.
    expect(ours.timeline.dispatches.map((d) => [d.decision, d.inline])).toEqual([
      ['continue', true],
      ['abort', true],
      ['continue', true],
      ['error', true],
      ['continue', true],
    ]);
    expect(ours.timeline.dispatches.map(comparableRow)).toEqual(
      ordinary.timeline.dispatches.map(comparableRow),
    );
    expect(ordinary.timeline.dispatches.some((d) => d.inline)).toBe(false);
    // A step that ran only the callbacks (rewrite, refusal, failure) took one more activity.
    const steps = ours.activities.scheduled.filter((n) => n === 'modelStep').length;
    expect(steps).toBe(ordinary.activities.scheduled.filter((n) => n === 'modelStep').length + 3);
    expect(ours.activities.scheduled).not.toContain('dispatchHook');
  }, 90_000);

  it('a model failure, an abort in the callbacks, an abort the model ignores: as the ordinary dispatch', async () => {
    const run = async (hookDispatch: typeof inline | undefined) => {
      const calls: Calls = [];
      const started: string[] = [];
      const model = scriptedModel(async (request) => {
        const text = lastUserText(request.messages);
        started.push(text);
        if (text.includes('boom')) throw new ModelError('the model broke');
        // Ignores its signal, then answers anyway.
        if (text.includes('deaf')) await new Promise((resolve) => setTimeout(resolve, 2_000));
        return `reply to ${text} after ${request.messages.length} messages`;
      });
      const agent = await agentWith(hookDispatch, calls, model);
      const session = await agent.createSession();
      const outcome = (value: unknown) =>
        value instanceof Error
          ? { code: (value as { code?: unknown }).code, message: value.message }
          : { status: (value as SendResponse).status, text: (value as SendResponse).text() };
      const results: unknown[] = [];
      results.push(outcome(await session.send('hello')));
      results.push(outcome(await session.send('now boom').catch((e: unknown) => e)));
      // Aborted while the callback runs.
      const waiting = session.send('please wait');
      await waitFor(() => calls.includes('submit please wait'), 10_000, 'the callback started');
      results.push(await session.abort('stop'), outcome(await waiting));
      // Aborted while a model that ignores its signal runs.
      const deaf = session.send('deaf one');
      await waitFor(() => started.includes('deaf one'), 10_000, 'the model started');
      results.push(await session.abort('stop'), outcome(await deaf));
      await waitFor(() => model.requests.length === 3, 10_000, 'the deaf model answered');
      results.push(outcome(await session.send('after')));
      const conversation = await session.conversation();
      const timeline = (await session.timeline()).map((e) => e.outcome);
      await session.close();
      return {
        results,
        calls,
        requests: model.requests.map((r) => [r.modelStepIndex, r.messages.length, r.prompt]),
        conversation,
        timeline,
        rows: timelineFromHistory(await historyOf(session.workflowId)).dispatches.map(
          (d) => d.decision,
        ),
      };
    };
    const [ours, ordinary] = await Promise.all([run(inline), run(undefined)]);
    expect(ours.results).toEqual([
      { status: 'completed', text: 'reply to hello after 1 messages' },
      { code: 'MODEL_ERROR', message: 'the model broke' },
      true,
      { status: 'aborted', text: '' },
      true,
      { status: 'aborted', text: '' },
      { status: 'completed', text: 'reply to after after 5 messages' },
    ]);
    expect(ours.timeline).toEqual(['continue', 'continue', 'cancelled', 'continue', 'continue']);
    expect(ours.rows).toEqual(ours.timeline);
    // The prompt whose model call failed is in the conversation; the aborted ones as by default.
    expect(ours).toEqual(ordinary);
  }, 90_000);

  it("a retried step runs the callbacks again, after the stream's restart marker", async () => {
    const calls: Calls = [];
    let attempts = 0;
    const model = scriptedModel((request) => {
      if (attempts++ === 0)
        throw new ModelError('provider 503', { retryable: true, statusCode: 503 });
      return { text: `reply to ${lastUserText(request.messages)}`, chunks: ['reply ', 'to hi'] };
    });
    const agent = await agentWith(inline, calls, model);
    const session = await agent.createSession();
    const call = session.send('hi');
    const events: string[] = [];
    for await (const event of call.stream()) {
      if (event.type === 'hook') events.push(`hook ${event.decision}`);
      if (event.type === 'restart') events.push(`restart ${event.attempt}`);
      if (event.type === 'text-delta') events.push(`delta ${event.text}`);
    }
    expect((await call).text()).toBe('reply to hi');
    // At least once: each attempt ran the callbacks; a reader that drops what came before a
    // restart sees the dispatch once.
    expect(calls).toEqual(['submit hi', 'submit hi']);
    expect(events).toEqual([
      'hook continue',
      'restart 2',
      'hook continue',
      'delta reply ',
      'delta to hi',
    ]);
    expect((await session.timeline()).map((e) => e.outcome)).toEqual(['continue']);
    await session.close();
  }, 60_000);

  it("keeps the budget and delivers abort() to the callbacks' abortSignal", async () => {
    const calls: Calls = [];
    const model = newModel();
    const agent = await agentWith(inline, calls, model);
    const session = await agent.createSession();
    await expect(session.send('wait for the budget')).rejects.toMatchObject({
      code: 'HOOK_TIMEOUT',
      event: 'UserPromptSubmit',
    });
    expect(calls).toContain('aborted Hook UserPromptSubmit exceeded 1500ms');
    const pending = session.send('wait for abort');
    await waitFor(() => calls.includes('submit wait for abort'), 10_000, 'the callback started');
    // Unlike a local dispatch, the step does not hold the workflow task: abort() takes effect.
    const reason = new Error('stop it');
    expect(await session.abort(reason)).toBe(true);
    const response = await pending;
    expect(response.status).toBe('aborted');
    expect(response.abortReason).toBe(reason);
    expect(calls).toContain('aborted stop it');
    expect(model.requests).toHaveLength(0);
    expect((await session.send('after')).text()).toBe('reply to after after 1 messages');
    expect((await session.timeline()).map((e) => e.outcome)).toEqual([
      'timeout',
      'cancelled',
      'continue',
    ]);
    await session.close();
  }, 60_000);

  it('calls the model in a second step when the worker has no copy of the stamped context', async () => {
    // A worker whose cache never gets the workflow's hand-overs: what a step meets on another
    // worker than the session's last workflow task, or after its copy was evicted.
    const calls: Calls = [];
    const model = newModel();
    const agent = await agentWith(inline, calls, model);
    const cache = agent.worker.conversationCache;
    cache.sync = () => undefined;
    const session = await agent.createSession();
    for (const [text, messages] of [
      ['one', 1],
      ['tool two', 5],
      ['three', 7],
    ] as const) {
      expect((await session.send(text)).text()).toBe(`reply to ${text} after ${messages} messages`);
    }
    const history = await historyOf(session.workflowId);
    const deferred = (history.events ?? []).filter((e) => {
      const data = e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
      return data && Buffer.from(data).toString('utf8').includes('"deferred":"context"');
    });
    expect(deferred).toHaveLength(3);
    // Each prompt reached the model once, after its callbacks, with the whole conversation.
    expect(calls).toEqual(['submit one', 'submit tool two', 'submit three']);
    expect(model.requests.map((r) => [r.modelStepIndex, r.messages.length, r.prompt])).toEqual([
      [0, 1, 'one'],
      [1, 3, 'tool two'],
      [2, 5, undefined],
      [3, 7, 'three'],
    ]);
    expect(cache.stats.hits).toBe(0);
    await session.close();
    const timeline = timelineFromHistory(history);
    expect(timeline.dispatches.map((d) => [d.decision, d.inline])).toEqual([
      ['continue', true],
      ['continue', true],
      ['continue', true],
    ]);
    expect(timeline.toolCalls).toHaveLength(1);
  }, 60_000);

  it('is refused for other events and as a mode for every event, naming the option', async () => {
    await expect(agentWith({ PreToolUse: 'inline' } as never, [])).rejects.toThrow(ConfigError);
    await expect(agentWith({ PreToolUse: 'inline' } as never, [])).rejects.toThrow(
      /advanced\.hookDispatch\.PreToolUse cannot be 'inline': only UserPromptSubmit \(inside/,
    );
    await expect(agentWith('inline' as never, [])).rejects.toThrow(
      /advanced\.hookDispatch cannot be 'inline' for every event/,
    );
  });
});
