/**
 * Where the activities' stream events go: a top session's to its own send's stream; a
 * sub-agent's to the stream of the top session's send that started it, each tagged with the
 * sub-agent's path, so one reader of that send sees the whole tree's work.
 */
import { describe, expect, it } from 'vitest';
import {
  createStreamActivities,
  streamKeyOf,
  streamTargetOf,
  withStreamEvents,
} from '../../../activities/stream-events.js';
import type {
  CheckPermissionInput,
  CheckPermissionOutput,
  DispatchHookInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  HookDispatchOutcome,
} from '../../../src/common/activity-io.js';
import type { SessionLineage } from '../../../src/common/workflow-io.js';
import type { AgentRegistry } from '../../../src/definition/registry.js';
import type { StreamEvent } from '../../../src/stream/events.js';
import { memoryStreams } from '../../../src/stream/memory.js';
import { sendCall } from '../../../src/stream/send-call.js';
import type { StreamKey, StreamTransport } from '../../../src/stream/transport.js';
import { modelStepStream, streamWriter } from '../../../src/stream/writer.js';

const lineage: SessionLineage = {
  parentSessionId: 'root',
  rootSessionId: 'root',
  agentPath: 'main/researcher',
  depth: 1,
  subagent: 'researcher',
  toolUseId: 't1',
  stream: { sessionId: 'root', requestId: 'send-1' },
};
const childSessionId = 'root/0-t1';

/** Every event of stream `key` written so far. */
async function eventsOf(transport: StreamTransport, key: StreamKey): Promise<StreamEvent[]> {
  const stop = new AbortController();
  const events: StreamEvent[] = [];
  const reading = (async () => {
    for await (const entry of transport.read(key, { signal: stop.signal })) {
      events.push(entry.event);
    }
  })();
  // The memory transport yields what it holds at once, then waits for more: stop it there.
  await new Promise((resolve) => setImmediate(resolve));
  stop.abort();
  await reading;
  return events;
}

/** A registry whose every agent publishes to `transport`. */
function registryWith(transport: StreamTransport): AgentRegistry {
  return { agent: () => ({ stream: transport }) } as unknown as AgentRegistry;
}

const completed: HookDispatchOutcome = {
  status: 'completed',
  outputs: [{ action: 'continue' }],
  callbackCount: 1,
  durationMs: 3,
};

function streamedActivities(transport: StreamTransport) {
  return withStreamEvents(registryWith(transport), {
    dispatchHook: async (_: DispatchHookInput) => completed,
    executeTool: async (_: ExecuteToolInput): Promise<ExecuteToolOutput> => ({
      status: 'success',
      model: 'ok',
    }),
    checkPermission: async (_: CheckPermissionInput): Promise<CheckPermissionOutput> => ({
      ok: true,
      result: { behavior: 'allow' },
    }),
  });
}

describe('streamKeyOf', () => {
  it("is a top session's own send", () => {
    expect(streamKeyOf({ sessionId: 's', requestId: 'r' })).toEqual({
      sessionId: 's',
      requestId: 'r',
    });
    expect(streamKeyOf({ sessionId: 's' })).toEqual({ sessionId: 's', requestId: undefined });
  });

  it("is the top session's send for a sub-agent, whatever its own send (or none)", () => {
    const own = { sessionId: childSessionId, requestId: 'task-t1', lineage };
    expect(streamKeyOf(own)).toEqual({ sessionId: 'root', requestId: 'send-1' });
    expect(streamKeyOf({ sessionId: childSessionId, lineage })).toEqual(lineage.stream);
  });

  it("streamTargetOf adds the sub-agent's path, and nothing for a top session", () => {
    expect(streamTargetOf({ sessionId: childSessionId, lineage })).toEqual({
      ...lineage.stream,
      agentPath: 'main/researcher',
    });
    expect(streamTargetOf({ sessionId: 's', requestId: 'r' })).not.toHaveProperty('agentPath');
  });
});

describe('streamWriter', () => {
  it('tags every event with the target path, and leaves a top session untagged', async () => {
    const transport = memoryStreams();
    const key = { sessionId: 'root', requestId: 'send-1' };
    streamWriter(transport, { ...key, agentPath: 'main/a' })!.emit({
      type: 'text-delta',
      text: 'x',
      step: 0,
    });
    streamWriter(transport, key)!.emit({ type: 'text-delta', text: 'y', step: 0 });
    expect(await eventsOf(transport, key)).toEqual([
      { type: 'text-delta', text: 'x', step: 0, agentPath: 'main/a' },
      { type: 'text-delta', text: 'y', step: 0 },
    ]);
  });

  it("keeps the path an event names (a parent's events a sub-agent carries), writing the top session's as none", async () => {
    const transport = memoryStreams();
    const key = { sessionId: 'root', requestId: 'send-1' };
    const writer = streamWriter(transport, { ...key, agentPath: 'main/lead/helper' })!;
    const start = { type: 'tool-start', toolUseId: 't', toolName: 'Task', input: {} } as const;
    writer.emit({ ...start, agentPath: 'main' });
    writer.emit({ ...start, agentPath: 'main/lead' });
    writer.emit({ type: 'text-delta', text: 'x', step: 0 });
    expect(await eventsOf(transport, key)).toEqual([
      start,
      { ...start, agentPath: 'main/lead' },
      { type: 'text-delta', text: 'x', step: 0, agentPath: 'main/lead/helper' },
    ]);
  });

  it("a sub-agent's model step writes its deltas and carried events to the top send, tagged", async () => {
    const transport = memoryStreams();
    const live = modelStepStream(
      transport,
      streamTargetOf({ sessionId: childSessionId, requestId: 'task-t1', lineage }),
      {
        step: 0,
        streamEvents: [
          {
            type: 'permission-decided',
            toolUseId: 'u',
            toolName: 'Read',
            behavior: 'allow',
            decidedBy: 'preset',
            editedInput: false,
          },
        ],
      },
      1,
    );
    live.request.onTextDelta!('hi');
    expect(await eventsOf(transport, lineage.stream)).toMatchObject([
      { type: 'permission-decided', agentPath: 'main/researcher' },
      { type: 'text-delta', text: 'hi', agentPath: 'main/researcher' },
    ]);
    expect(await eventsOf(transport, { sessionId: childSessionId, requestId: 'task-t1' })).toEqual(
      [],
    );
  });
});

describe('withStreamEvents', () => {
  it("a sub-agent's hook, tool and permission events go to the top send, tagged with its path", async () => {
    const transport = memoryStreams();
    const activities = streamedActivities(transport);
    const own = { agentName: 'a', sessionId: childSessionId, requestId: 'task-t1', lineage };
    await activities.dispatchHook({
      ...own,
      dispatchId: 'd',
      event: 'PreToolUse',
      payload: { toolName: 'Bash', toolUseId: 'u1' },
      budgetMs: 1000,
      callbackCount: 1,
    } as DispatchHookInput);
    await activities.checkPermission({
      ...own,
      toolUseId: 'u1',
      toolName: 'Bash',
      kind: 'execute',
      affectedPaths: [],
    } as unknown as CheckPermissionInput);
    await activities.executeTool({
      ...own,
      toolUseId: 'u1',
      toolName: 'Bash',
      input: { command: 'ls' },
    } as unknown as ExecuteToolInput);
    const events = await eventsOf(transport, lineage.stream);
    expect(events.map((event) => event.type)).toEqual([
      'hook',
      'permission-asked',
      'tool-start',
      'tool-end',
    ]);
    for (const event of events) expect(event).toMatchObject({ agentPath: 'main/researcher' });
  });

  it("a sub-agent's SessionStart and SessionEnd (no send of its own) reach the top send too", async () => {
    const transport = memoryStreams();
    await streamedActivities(transport).dispatchHook({
      agentName: 'a',
      sessionId: childSessionId,
      lineage,
      dispatchId: 'd',
      event: 'SessionStart',
      payload: {},
      budgetMs: 1000,
      callbackCount: 1,
    } as DispatchHookInput);
    expect(await eventsOf(transport, lineage.stream)).toMatchObject([
      { type: 'hook', event: 'SessionStart', agentPath: 'main/researcher' },
    ]);
  });

  it("a top session's SessionStart has no stream, and its tool events carry no path", async () => {
    const transport = memoryStreams();
    const activities = streamedActivities(transport);
    await activities.dispatchHook({
      agentName: 'a',
      sessionId: 'root',
      dispatchId: 'd',
      event: 'SessionStart',
      payload: {},
      budgetMs: 1000,
      callbackCount: 1,
    } as DispatchHookInput);
    await activities.executeTool({
      agentName: 'a',
      sessionId: 'root',
      requestId: 'send-1',
      toolUseId: 'u1',
      toolName: 'Read',
      input: {},
    } as unknown as ExecuteToolInput);
    const events = await eventsOf(transport, lineage.stream);
    expect(events.map((event) => event.type)).toEqual(['tool-start', 'tool-end']);
    for (const event of events) expect(event).not.toHaveProperty('agentPath');
  });
});

describe('publishStreamEvents', () => {
  it("publishes a sub-agent's queued events to the top send, tagged", async () => {
    const transport = memoryStreams();
    await createStreamActivities(registryWith(transport)).publishStreamEvents({
      agentName: 'a',
      sessionId: childSessionId,
      requestId: 'task-t1',
      lineage,
      events: [{ type: 'tool-start', toolUseId: 'u', toolName: 'Task', input: {} }],
    });
    expect(await eventsOf(transport, lineage.stream)).toEqual([
      {
        type: 'tool-start',
        toolUseId: 'u',
        toolName: 'Task',
        input: {},
        agentPath: 'main/researcher',
      },
    ]);
  });
});

describe("a send's textStream", () => {
  it("yields the send's own text, not its sub-agents'", async () => {
    const transport = memoryStreams();
    const key = { sessionId: 'root', requestId: 'send-1' };
    const settled = { status: 'completed' as const, toolCalls: [], text: () => 'parent' };
    streamWriter(transport, { ...key, agentPath: 'main/researcher' })!.emit({
      type: 'text-delta',
      text: 'child',
      step: 0,
    });
    streamWriter(transport, key)!.emit({ type: 'text-delta', text: 'parent', step: 0 });
    transport.append(key, { type: 'finish', status: 'completed', text: 'parent', toolCalls: [] });
    const call = sendCall(Promise.resolve(settled), transport, key);
    const texts: string[] = [];
    for await (const text of call.textStream()) texts.push(text);
    expect(texts).toEqual(['parent']);
  });
});
