/**
 * A sub-agent's live stream: the events of the child a `Task` call starts reach the stream
 * of the send that made the call, each tagged with the child's path (`main/cleaner`),
 * between the parent's `tool-start` and `tool-end` of the Task call (which name the child's
 * session), and before the send's `finish`, which only the send writes. The send's
 * `textStream()` is the parent's text alone, and the parent records no local activity to keep
 * that order. Worker and client in this process, on the
 * in-memory transport; the agent of `test/fixtures/subagent-agent.ts`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent, type StreamedEvent } from '../../../src/index.js';
import { subagentAgentOptions } from '../../fixtures/subagent-agent.js';
import { crashEnv } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('subagents-stream');
mkdirSync(join(workspace, 'build'));
writeFileSync(join(workspace, 'build', 'out.js'), 'built\n');

let agent: Agent;

beforeAll(async () => {
  agent = await createAgent(subagentAgentOptions(crashEnv({ workspace, label: 'stream' })));
});

afterAll(async () => {
  await agent?.shutdown();
});

describe("a send's stream with a sub-agent", () => {
  it("carries the child's events tagged with its path, between the Task's tool-start and tool-end, before the send's finish", async () => {
    const session = await agent.createSession();
    const call = session.send('clean');
    const events: StreamedEvent[] = [];
    for await (const event of call.stream()) events.push(event);
    const response = await call;
    expect(response.text()).toBe('parent got: cleaner got: rm -rf is not allowed');

    const start = events.findIndex((e) => e.type === 'tool-start' && e.toolName === 'Task');
    const end = events.findIndex((e) => e.type === 'tool-end' && e.toolName === 'Task');
    const taskStart = events[start] as Extract<StreamedEvent, { type: 'tool-start' }>;
    const childSessionId = taskStart.childSessionId!;
    expect(childSessionId.startsWith(`${session.id}/`)).toBe(true);
    expect(taskStart).not.toHaveProperty('agentPath');
    expect(events[end]).toMatchObject({ status: 'success', childSessionId });

    const child = events.filter((e) => 'agentPath' in e);
    expect(child.every((e) => (e as { agentPath?: string }).agentPath === 'main/cleaner')).toBe(
      true,
    );
    // The child's hooks (its SessionStart, its blocked Bash call, its SessionEnd) and its text.
    expect(child.filter((e) => e.type === 'hook')).toMatchObject([
      { event: 'SessionStart', decision: 'continue' },
      { event: 'PreToolUse', toolName: 'Bash', decision: 'abort' },
      { event: 'SessionEnd', decision: 'continue' },
    ]);
    const childText = child.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('');
    expect(childText).toBe('cleaner got: rm -rf is not allowed');
    // All of them inside the Task call; the send's own finish is last, and the only one.
    const indexes = child.map((e) => events.indexOf(e));
    expect(Math.min(...indexes)).toBeGreaterThan(start);
    expect(Math.max(...indexes)).toBeLessThan(end);
    expect(events.filter((e) => e.type === 'finish' || e.type === 'error')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'finish', status: 'completed' });
    expect(events.at(-1)).not.toHaveProperty('agentPath');

    // The text stream is the parent's answer alone.
    const texts: string[] = [];
    for await (const text of call.textStream()) texts.push(text);
    expect(texts.join('')).toBe('parent got: cleaner got: rm -rf is not allowed');
    // The order costs the parent nothing: the child's first activity published the Task's
    // tool-start (the parent's history has no stream local activity).
    const history = await agent.client.temporal.workflow
      .getHandle(session.workflowId)
      .fetchHistory();
    // The run's one patch marker (workflows/patches.ts) aside, no local activity's marker.
    const markers = (history.events ?? []).filter(
      (e) =>
        e.markerRecordedEventAttributes &&
        e.markerRecordedEventAttributes.markerName !== 'core_patch',
    );
    expect(markers).toEqual([]);
    await session.close();
  }, 60_000);
});
