/**
 * `hookDispatch: { PostToolUse: 'inline' }` (issue 19, item 3): the callbacks run inside the
 * tool's own `executeTool` activity, right after a tool that succeeded. What must hold,
 * against the ordinary dispatch of the same session: the same results for the model, the
 * same conversation, the same failures and timeline rows (marked `inline`), PostToolUseFailure
 * dispatched as usual, the budget kept, and `abort()` reaching the callbacks with the tool's
 * result kept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  HookEvent,
  type Agent,
  type AgentOptions,
  type ConversationMessage,
  type SendResponse,
  type Session,
  fileStore,
} from '../../../src/index.js';
import { decodeHistoryPayloads, storedPayloadEventIds } from '../../../src/history/decode.js';
import { encryptedCodecs } from '../../../src/payloads/data-converter.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { comparableRow, historyOf } from '../../helpers/history.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

/**
 * `Echo` answers `echo <word>`; the word `fail` makes it throw, `slow` makes it take 400 ms,
 * `big` makes it answer 150,000 characters more.
 */
const echoTool = defineTool({
  name: 'Echo',
  description: 'Echo a word back',
  kind: 'readonly',
  inputSchema: z.object({ word: z.string().min(1) }),
  execute: async ({ word }) => {
    if (word.includes('fail')) throw new Error(`cannot echo ${word}`);
    if (word.includes('slow')) await new Promise((resolve) => setTimeout(resolve, 400));
    return `echo ${word}${word.includes('big') ? ` ${'x'.repeat(150_000)}` : ''}`;
  },
});

/** The live stream of `call`: its events as `type[:status or decision]`. */
async function streamOf(call: ReturnType<Session['send']>): Promise<string[]> {
  const events: string[] = [];
  for await (const event of call.stream()) {
    if (event.type === 'tool-start') events.push('tool-start');
    if (event.type === 'tool-end') events.push(`tool-end:${event.status}`);
    if (event.type === 'hook') events.push(`hook:${event.event}:${event.decision}`);
  }
  return events;
}

/** `call <word>` makes the model call Echo with it, then say what the tool answered. */
const newModel = () =>
  scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') {
      return `saw ${last.results.map((r) => `${r.status}: ${r.model}`).join('; ')}`;
    }
    const prompt = typeof request.prompt === 'string' ? request.prompt : '';
    return { toolCalls: [{ toolName: 'Echo', input: { word: prompt.replace(/^call /, '') } }] };
  });

/** What the callbacks saw, in order. */
type Calls = string[];

function hooksFor(calls: Calls): NonNullable<AgentOptions['advanced']>['hooks'] {
  return {
    [HookEvent.PostToolUse]: [
      async (input) => {
        const output = String(input.toolOutput);
        calls.push(`post ${output}`);
        if (output.includes('secret')) return { action: 'continue', modifiedOutput: 'redacted' };
        if (output.includes('big'))
          return { action: 'continue', modifiedOutput: 'y'.repeat(200_000) };
        if (output.includes('block')) return { action: 'abort', reason: 'blocked by policy' };
        if (output.includes('throw')) throw new Error('the check broke');
        if (output.includes('wait')) {
          await new Promise((resolve) =>
            input.abortSignal!.addEventListener('abort', resolve, { once: true }),
          );
          const reason = input.abortSignal!.reason as unknown;
          calls.push(`aborted ${reason instanceof Error ? reason.message : String(reason)}`);
          return { action: 'continue' };
        }
        return { action: 'continue', reason: 'looked' };
      },
    ],
    [HookEvent.PostToolUseFailure]: [
      async (input) => {
        calls.push(`failure ${String(input.toolOutput)}`);
        return { action: 'continue' };
      },
    ],
  };
}

const inline = { PostToolUse: 'inline' } as const;

async function agentWith(hookDispatch: typeof inline | undefined, calls: Calls): Promise<Agent> {
  const agent = await createAgent({
    model: newModel(),
    tools: [echoTool],
    advanced: {
      ...(hookDispatch ? { hookDispatch } : {}),
      hookTimeoutMs: 1_500,
      hooks: hooksFor(calls),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('inline-tool') },
    },
  });
  agents.push(agent);
  return agent;
}

/** The activity types scheduled, in order. */
async function activitiesOf(workflowId: string): Promise<string[]> {
  return ((await historyOf(workflowId)).events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((n): n is string => typeof n === 'string');
}

/** The tool results the conversation holds, as the model saw them. */
function toolResults(conversation: ConversationMessage[]) {
  return conversation.flatMap((m) =>
    m.role === 'tool' ? m.results.map((r) => `${r.status}: ${r.model}`) : [],
  );
}

describe("hookDispatch: { PostToolUse: 'inline' }", () => {
  it('decides as the ordinary dispatch does, inside the tool activity', async () => {
    const run = async (hookDispatch: typeof inline | undefined) => {
      const calls: Calls = [];
      const agent = await agentWith(hookDispatch, calls);
      const session = await agent.createSession({ sessionId: `inline-tool-${randomUUID()}` });
      const texts: string[] = [];
      for (const word of ['plain', 'secret', 'block', 'throw', 'fail', 'wait']) {
        texts.push((await session.send(`call ${word}`)).text());
      }
      // The stream of one send shows the dispatch as any other, after the tool's end.
      const call = session.send('call streamed');
      const streamed = await streamOf(call);
      texts.push((await call).text());
      const conversation = await session.conversation();
      const live = (await session.timeline()).map((e) => [e.event, e.outcome, e.toolName]);
      await session.close();
      return {
        texts,
        calls,
        streamed,
        conversation,
        live,
        timeline: timelineFromHistory(await historyOf(session.workflowId)),
        activities: await activitiesOf(session.workflowId),
      };
    };
    const [ours, ordinary] = await Promise.all([run(inline), run(undefined)]);
    expect(ours.texts).toEqual([
      'saw success: echo plain',
      'saw success: redacted',
      'saw error: blocked by policy',
      'saw error: PostToolUse hook failed: the check broke',
      'saw error: Echo failed: cannot echo fail',
      'saw error: PostToolUse hook failed: Hook PostToolUse exceeded 1500ms',
      'saw success: echo streamed',
    ]);
    expect(ours.calls).toContain('aborted Hook PostToolUse exceeded 1500ms');
    expect(ours.calls).toContain('failure Echo failed: cannot echo fail');
    expect(ours.streamed).toEqual(['tool-start', 'tool-end:success', 'hook:PostToolUse:continue']);
    // Same answers, callbacks, conversation and rows; ours marked inline.
    expect(ours.texts).toEqual(ordinary.texts);
    expect(ours.calls).toEqual(ordinary.calls);
    expect(ours.streamed).toEqual(ordinary.streamed);
    expect(toolResults(ours.conversation)).toEqual(toolResults(ordinary.conversation));
    expect(ours.live).toEqual(ordinary.live);
    expect(ours.timeline.dispatches.map(comparableRow)).toEqual(
      ordinary.timeline.dispatches.map(comparableRow),
    );
    expect(ours.timeline.dispatches.map((d) => [d.event, d.decision, d.inline])).toEqual([
      ['PostToolUse', 'continue', true],
      ['PostToolUse', 'continue', true],
      ['PostToolUse', 'abort', true],
      ['PostToolUse', 'error', true],
      ['PostToolUseFailure', 'continue', undefined],
      ['PostToolUse', 'timeout', true],
      ['PostToolUse', 'continue', true],
    ]);
    expect(ours.timeline.toolCalls.map((c) => c.result?.status)).toEqual(
      ordinary.timeline.toolCalls.map((c) => c.result?.status),
    );
    // Only the failed tool's PostToolUseFailure took an activity of its own.
    expect(ours.activities.filter((n) => n === 'dispatchHook')).toHaveLength(1);
    expect(ordinary.activities.filter((n) => n === 'dispatchHook')).toHaveLength(7);
  }, 120_000);

  it("delivers abort() to the callbacks' abortSignal and keeps the tool's result", async () => {
    const run = async (hookDispatch: typeof inline | undefined) => {
      const calls: Calls = [];
      const agent = await agentWith(hookDispatch, calls);
      // A budget the abort comes well within.
      const session = await agent.createSession({ hookTimeoutMs: 60_000 });
      // A tool of 400 ms, then a callback that waits 300 ms or more for its abort.
      const pending = session.send('call slow wait');
      const streamed = streamOf(pending);
      await waitFor(() => calls.includes('post echo slow wait'), 10_000, 'the callback started');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const aborted = await session.abort('stop');
      const response: SendResponse = await pending;
      const after = (await session.send('call after')).text();
      const conversation = await session.conversation();
      const entries = await session.timeline();
      await session.close();
      const timeline = timelineFromHistory(await historyOf(session.workflowId));
      return {
        aborted,
        status: response.status,
        streamed: await streamed,
        after,
        calls,
        results: toolResults(conversation),
        live: entries.map((e) => [e.event, e.outcome]),
        rows: timeline.dispatches.map((d) => [d.event, d.decision]),
        tools: timeline.toolCalls.map((c) => c.result?.status),
        // How long the cancelled dispatch ran: its callback's wait, not the tool's time.
        durations: {
          live: entries[0]!.durationMs,
          row: timeline.dispatches[0]!.durationMs!,
        },
      };
    };
    const [ours, ordinary] = await Promise.all([run(inline), run(undefined)]);
    expect(ours).toMatchObject({
      aborted: true,
      status: 'aborted',
      after: 'saw success: echo after',
      calls: ['post echo slow wait', 'aborted stop', 'post echo after'],
      streamed: ['tool-start', 'tool-end:success', 'hook:PostToolUse:cancelled'],
    });
    // The tool ran: its result stands, as with the ordinary dispatch.
    expect(ours.results[0]).toBe(
      'success: echo slow wait\n[the prompt was aborted after this tool ran]',
    );
    expect(ours.durations.live).toBeGreaterThanOrEqual(300);
    expect(ours.durations.row).toBe(ours.durations.live);
    expect(ordinary.durations.live).toBeGreaterThanOrEqual(300);
    const { durations: _ours, ...oursRest } = ours;
    const { durations: _ordinary, ...ordinaryRest } = ordinary;
    expect(oursRest).toEqual(ordinaryRest);
    expect(ours.live).toEqual([
      ['PostToolUse', 'cancelled'],
      ['PostToolUse', 'continue'],
    ]);
    expect(ours.rows).toEqual(ours.live);
  }, 60_000);

  it("reads a row from history without the payload store as unreadable when the tool's result and outcome were stored together", async () => {
    const dir = tempDir('inline-tool-payloads');
    const run = async (hookDispatch: typeof inline | undefined) => {
      const agent = await createAgent({
        model: newModel(),
        tools: [echoTool],
        advanced: {
          ...(hookDispatch ? { hookDispatch } : {}),
          maxToolOutputBytes: 300_000,
          payloadStore: fileStore(dir),
          hooks: hooksFor([]),
          temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('inline-tool') },
        },
      });
      agents.push(agent);
      const session = await agent.createSession();
      // 150,000 characters of output, 200,000 of modifiedOutput: each under the store's
      // 256 KiB threshold, together over it.
      const text = (await session.send('call big')).text();
      await session.close();
      const history = await historyOf(session.workflowId);
      const stored = storedPayloadEventIds(history);
      const decoded = await decodeHistoryPayloads(
        history,
        encryptedCodecs(undefined, { payloadStore: fileStore(dir), offloadPayloadBytes: 262_144 }),
      );
      const rows = (t: ReturnType<typeof timelineFromHistory>) =>
        t.dispatches.map((d) => [d.event, d.decision, d.reason?.slice(0, 40)]);
      return {
        text,
        without: rows(timelineFromHistory(history, { storedPayloadEventIds: stored })),
        with: rows(timelineFromHistory(decoded, { storedPayloadEventIds: stored })),
      };
    };
    const [ours, ordinary] = await Promise.all([run(inline), run(undefined)]);
    expect(ours.text).toBe(`saw success: ${'y'.repeat(200_000)}`);
    expect(ours.text).toBe(ordinary.text);
    // With the store, the same rows; without it, the inline row says where its outcome is.
    expect(ours.with).toEqual(ordinary.with);
    expect(ours.with).toEqual([['PostToolUse', 'continue', undefined]]);
    expect(ours.without).toEqual([
      ['PostToolUse', 'error', "the outcome is in the tool's result, whi"],
    ]);
  }, 60_000);

  it('sets the tool heartbeat timeout from advanced.temporal.toolHeartbeatTimeoutMs', async () => {
    const agent = await createAgent({
      model: newModel(),
      tools: [echoTool],
      advanced: {
        hookDispatch: inline,
        hooks: hooksFor([]),
        temporal: {
          address: temporalAddress(),
          taskQueue: uniqueTaskQueue('inline-tool'),
          toolHeartbeatTimeoutMs: 2_000,
        },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    expect((await session.send('call plain')).text()).toBe('saw success: echo plain');
    await session.close();
    const events = (await historyOf(session.workflowId)).events ?? [];
    const execute = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool',
    )!.activityTaskScheduledEventAttributes!;
    expect(Number(execute.heartbeatTimeout?.seconds)).toBe(2);
    // The inline dispatch's budget is added to the tool's: 600 s + 30 s + 600 s.
    expect(Number(execute.startToCloseTimeout?.seconds)).toBe(1_230);
  }, 60_000);
});
