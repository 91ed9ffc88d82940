/**
 * Live streams of `send()` with the embedded (in-process) transport, on the real server:
 * text deltas from the model step, events from the hook, tool and permission activities,
 * the final status; resuming by entry id; and nothing of it in the workflow history.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HookError,
  HookEvent,
  createAgent,
  type Agent,
  type StreamedEvent,
} from '../../../src/index.js';
import { scriptedModel, toolCall, type ScriptedTurn } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('stream');
writeFileSync(join(workspace, 'notes.txt'), 'hello\n');

/** Turns by prompt text: the prompt says what the model does. */
const turns: Record<string, ScriptedTurn[]> = {
  chunks: [{ text: 'Hello, streaming world.', chunks: ['Hel', 'lo, ', 'stream', 'ing world.'] }],
  tool: [toolCall('Read', { file_path: 'notes.txt' }), 'The notes say hello.'],
  long: ['x'.repeat(60)],
  short: ['y'.repeat(60)],
};
const progress = new Map<string, number>();
const model = scriptedModel(
  (request) => {
    const last = [...request.messages].reverse().find((m) => m.role === 'user');
    const key = typeof last?.content === 'string' ? last.content.split(' ')[0]! : '';
    const index = progress.get(request.requestId) ?? 0;
    progress.set(request.requestId, index + 1);
    const turn = turns[key]?.[index];
    if (!turn) throw new Error(`no turn ${index} for '${key}'`);
    // `short` streams its text in one piece, `long` in 60: their histories must not differ.
    if (key === 'short' && typeof turn === 'string') return { text: turn, chunks: [turn] };
    if (key === 'long' && typeof turn === 'string') return { text: turn, chunks: Array.from(turn) };
    return turn;
  },
  { chunkDelayMs: 30 },
);

let agent: Agent;
let quiet: Agent;
beforeAll(async () => {
  const common = {
    model,
    workspaceRoots: [workspace],
  };
  agent = await createAgent({
    ...common,
    advanced: {
      permission: async () => 'allow' as const,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) =>
            String(input.userPrompt).startsWith('refuse')
              ? { action: 'abort', reason: 'refused by policy' }
              : { action: 'continue' },
        ],
        [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('stream') },
    },
  });
  quiet = await createAgent({
    ...common,
    advanced: {
      stream: false,
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('stream-off') },
    },
  });
});
afterAll(async () => {
  await agent?.shutdown();
  await quiet?.shutdown();
});

async function collect(events: AsyncIterable<StreamedEvent>): Promise<StreamedEvent[]> {
  const out: StreamedEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('send() streams', () => {
  it('textStream() yields the deltas in order, the first before the send resolves, and they join to the recorded text', async () => {
    const session = await agent.createSession();
    const call = session.send('chunks please');
    let settledAt = Infinity;
    void call.then(() => (settledAt = performance.now()));
    const deltas: string[] = [];
    let firstAt = 0;
    for await (const text of call.textStream()) {
      if (deltas.length === 0) firstAt = performance.now();
      deltas.push(text);
    }
    const response = await call;
    expect(deltas).toEqual(['Hel', 'lo, ', 'stream', 'ing world.']);
    expect(firstAt).toBeLessThan(settledAt);
    expect(deltas.join('')).toBe(response.text());
    const conversation = await session.conversation();
    const assistant = conversation.filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.text)).toEqual([deltas.join('')]);
    await session.close();
  });

  it('stream() yields the hook, permission and tool events of a tool round, then finish', async () => {
    const session = await agent.createSession();
    const call = session.send('tool round');
    const events = await collect(call.stream());
    const response = await call;
    const toolUseId = response.toolCalls[0]!.toolUseId;
    const shape = events
      .filter((e) => e.type !== 'text-delta')
      .map((e) => {
        switch (e.type) {
          case 'hook':
            return `hook:${e.event}:${e.decision}${e.toolUseId ? `:${e.toolUseId}` : ''}`;
          case 'permission-asked':
            return `permission-asked:${e.toolName}:${e.toolUseId}`;
          case 'permission-decided':
            return `permission-decided:${e.behavior}:${e.toolUseId}`;
          case 'tool-start':
            return `tool-start:${e.toolName}:${e.toolUseId}`;
          case 'tool-end':
            return `tool-end:${e.status}:${e.toolUseId}`;
          case 'finish':
            return `finish:${e.status}`;
          default:
            return e.type;
        }
      });
    expect(shape).toEqual([
      'hook:UserPromptSubmit:continue',
      `hook:PreToolUse:continue:${toolUseId}`,
      `permission-asked:Read:${toolUseId}`,
      `permission-decided:allow:${toolUseId}`,
      `tool-start:Read:${toolUseId}`,
      `tool-end:success:${toolUseId}`,
      'finish:completed',
    ]);
    // The deltas of step 1 (after the tool) are the final text; step 0 only called the tool.
    const deltas = events.filter((e) => e.type === 'text-delta');
    expect(deltas.every((e) => e.step === 1)).toBe(true);
    expect(deltas.map((e) => e.text).join('')).toBe('The notes say hello.');
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: 'finish', text: response.text() });
    // Entry ids increase.
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await session.close();
  });

  it('session.stream() resumed after the last id seen gets the rest, nothing lost or doubled', async () => {
    const session = await agent.createSession();
    const call = session.send('tool again');
    await call;
    const whole = await collect(session.stream(call.requestId));
    expect(whole.at(-1)?.type).toBe('finish');
    const head: StreamedEvent[] = [];
    for await (const event of session.stream(call.requestId)) {
      head.push(event);
      if (head.length === 3) break;
    }
    const rest = await collect(session.stream(call.requestId, { after: head.at(-1)!.id }));
    expect([...head, ...rest]).toEqual(whole);
    await session.close();
  });

  it('a rejected send ends its stream with an error event, and textStream() throws the error', async () => {
    const session = await agent.createSession();
    const call = session.send('refuse this');
    const events = await collect(call.stream());
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      error: { name: 'HookError', code: 'HOOK_ABORTED' },
    });
    await expect(
      (async () => {
        for await (const _ of call.textStream()) {
          /* drain */
        }
      })(),
    ).rejects.toBeInstanceOf(HookError);
    await expect(call).rejects.toBeInstanceOf(HookError);
    await session.close();
  });

  it('with advanced.stream false a send still resolves, and its stream has only the final event', async () => {
    const session = await quiet.createSession();
    const call = session.send('chunks off');
    const events = await collect(call.stream());
    const response = await call;
    expect(response.text()).toBe('Hello, streaming world.');
    expect(events).toEqual([
      {
        type: 'finish',
        id: 'final',
        status: 'completed',
        text: 'Hello, streaming world.',
        toolCalls: [],
      },
    ]);
    await session.close();
  });

  it('the history records none of the deltas: 60 pieces or 1, the same events and one final message', async () => {
    const client = await rawClient();
    try {
      const historyOf = async (prompt: string) => {
        const session = await agent.createSession();
        const call = session.send(prompt);
        const deltas = (await collect(call.stream())).filter((e) => e.type === 'text-delta');
        await session.close();
        const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
        return { deltas: deltas.length, events: history.events ?? [] };
      };
      const long = await historyOf('long text');
      const short = await historyOf('short text');
      expect(long.deltas).toBe(60);
      expect(short.deltas).toBe(1);
      // Workflow task events aside (types 5 to 9), and as a count per type: how many tasks a
      // run takes, and where its Updates' acceptances fall among the first task's commands
      // (the patch marker, the search attribute upserts), depend on when the Updates arrive,
      // not on the stream.
      const types = (events: typeof long.events) =>
        events
          .map((e) => Number(e.eventType))
          .filter((t) => !(t >= 5 && t <= 9))
          .sort((a, b) => a - b);
      expect(types(long.events)).toEqual(types(short.events));
      // Only the session's own Updates (ready, send, close): no Update, signal or query per piece.
      const updates = long.events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
      expect(
        updates.map(
          (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name,
        ),
      ).toEqual(['ready', 'send', 'close']);
      expect(long.events.some((e) => e.workflowExecutionSignaledEventAttributes)).toBe(false);
      // The step's result holds the text once, whole.
      const completed = long.events
        .map((e) => e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data)
        .filter((data): data is Uint8Array => data instanceof Uint8Array)
        .map((data) => Buffer.from(data).toString('utf8'))
        .filter((text) => text.includes('"finishReason"'));
      expect(completed).toHaveLength(1);
      expect(JSON.parse(completed[0]!)).toMatchObject({ text: 'x'.repeat(60) });
    } finally {
      await client.connection.close();
    }
  });
});
