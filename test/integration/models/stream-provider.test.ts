/**
 * The provider path streams: the model step calls an OpenAI-compatible HTTP endpoint with
 * `stream: true` (server-sent events) and the send's stream carries the deltas as the
 * endpoint sends them, while history records only the final message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent, type StreamedEvent } from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

let server: FakeOpenAI | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
  agent = undefined;
  server = undefined;
});

async function agentOn(script: FakeReply[]): Promise<Agent> {
  server = await startFakeOpenAI(script, { apiKey: 'sk-test' });
  agent = await createAgent({
    model: 'gpt-4o-mini',
    apiKey: 'sk-test',
    baseUrl: server.baseUrl,
    workspaceRoots: [tempDir('stream-provider')],
    advanced: {
      permission: 'bypass-permissions',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('stream-provider') },
    },
  });
  return agent;
}

async function collect(events: AsyncIterable<StreamedEvent>): Promise<StreamedEvent[]> {
  const out: StreamedEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const text = 'Streams arrive piece by piece, in order, and join to the answer.';

describe('a streaming OpenAI-compatible endpoint', () => {
  it('sends stream: true; the deltas arrive in order and join to the recorded message', async () => {
    const chunks = ['Streams arrive ', 'piece by piece, ', 'in order, ', 'and join to the answer.'];
    const made = await agentOn([{ text, chunks, chunkDelayMs: 40 }]);
    const session = await made.createSession();
    const call = session.send('stream it');
    const deltas: string[] = [];
    for await (const piece of call.textStream()) deltas.push(piece);
    const response = await call;
    expect(server!.chatBodies[0]).toMatchObject({ stream: true });
    expect(deltas).toEqual(chunks);
    expect(response.text()).toBe(text);
    const assistant = (await session.conversation()).filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.text)).toEqual([deltas.join('')]);
    await session.close();
  });

  it('streams a tool round: the tool call, its execution, then the deltas of the answer', async () => {
    const made = await agentOn([
      { toolCalls: [{ name: 'Glob', arguments: { pattern: '*.md' } }] },
      { text: 'No markdown here.', chunkChars: 3 },
    ]);
    const session = await made.createSession();
    const call = session.send('look around');
    const events = await collect(call.stream());
    const response = await call;
    expect(events.filter((e) => e.type !== 'text-delta').map((e) => e.type)).toEqual([
      'permission-decided',
      'tool-start',
      'tool-end',
      'finish',
    ]);
    const deltas = events.filter((e) => e.type === 'text-delta');
    expect(deltas.map((e) => e.text)).toEqual(['No ', 'mar', 'kdo', 'wn ', 'her', 'e.']);
    expect(deltas.every((e) => e.step === 1)).toBe(true);
    expect(response.text()).toBe('No markdown here.');
    await session.close();
  });

  it('records the same history for 64 pieces as for 1: no per-chunk events, the text once', async () => {
    const answer = 'z'.repeat(64);
    const made = await agentOn([
      { text: answer, chunkChars: 1 },
      { text: answer, chunkChars: 64 },
    ]);
    const client = await rawClient();
    try {
      const run = async () => {
        const session = await made.createSession();
        const call = session.send('go');
        const deltas = (await collect(call.stream())).filter((e) => e.type === 'text-delta');
        await session.close();
        const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
        return { deltas: deltas.length, events: history.events ?? [] };
      };
      const many = await run();
      const one = await run();
      expect([many.deltas, one.deltas]).toEqual([64, 1]);
      // Workflow task events aside (types 5 to 9), and as a count per type: how many tasks a
      // run takes, and where its Updates' acceptances fall among the first task's commands
      // (the patch marker, the search attribute upserts), depend on when the Updates arrive,
      // not on the stream.
      const types = (events: typeof many.events) =>
        events
          .map((e) => Number(e.eventType))
          .filter((t) => !(t >= 5 && t <= 9))
          .sort((a, b) => a - b);
      expect(types(many.events)).toEqual(types(one.events));
      const bytes = (events: typeof many.events) =>
        events.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
      // Same text, same history size give or take ids and times (no chunk leaves a trace).
      expect(Math.abs(bytes(many.events) - bytes(one.events))).toBeLessThan(2000);
    } finally {
      await client.connection.close();
    }
  });

  it('a step cut off mid-stream runs again: a restart marker, then the new deltas, which join to the recorded text', async () => {
    const answer = 'The second attempt says it all.';
    const made = await agentOn([
      {
        text: 'The first attempt is cut short.',
        chunkChars: 4,
        chunkDelayMs: 30,
        cutAfterChunks: 3,
      },
      { text: answer, chunkChars: 4 },
    ]);
    const session = await made.createSession();
    const call = session.send('try twice');
    const events = await collect(call.stream());
    const response = await call;
    const restart = events.findIndex((e) => e.type === 'restart');
    expect(events[restart]).toMatchObject({ type: 'restart', step: 0, attempt: 2 });
    const before = events.slice(0, restart).filter((e) => e.type === 'text-delta');
    const after = events.slice(restart).filter((e) => e.type === 'text-delta');
    expect(before.map((e) => e.text).join('')).toBe('The first at');
    expect(after.map((e) => e.text).join('')).toBe(answer);
    expect(response.text()).toBe(answer);
    const assistant = (await session.conversation()).filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.text)).toEqual([answer]);
    await session.close();
  });

  it('an abort mid-stream stops the step: the send resolves aborted before the endpoint finished', async () => {
    const made = await agentOn([{ text: 'a'.repeat(100), chunkChars: 1, chunkDelayMs: 100 }]);
    const session = await made.createSession();
    const call = session.send('long answer');
    let seen = 0;
    for await (const _piece of call.textStream()) {
      seen += 1;
      if (seen === 1) void session.abort();
    }
    const response = await call;
    expect(response.status).toBe('aborted');
    // 100 pieces 100 ms apart take 10 s; the cancellation (carried by the step's heartbeats)
    // cut the request long before that.
    expect(seen).toBeLessThan(100);
    await session.close();
  });
});
