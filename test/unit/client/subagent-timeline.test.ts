/** `Session.timeline({ subagents: true })`'s tree read and merge, on fake query answers. */
import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import { QueryNotRegisteredError } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { ChildRunInfo } from '../../../src/common/messages.js';
import type { TimelineEntry } from '../../../src/common/workflow-io.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import { mergeByStart, subagentTimelines } from '../../../src/client/subagent-timeline.js';

const entry = (
  seq: number,
  startedAt: number,
  event: HookEvent = HookEvent.UserPromptSubmit,
): TimelineEntry => ({
  seq,
  event,
  callbackCount: 1,
  outcome: 'continue',
  durationMs: 1,
  startedAt,
});

const child = (sessionId: string, agentPath: string): ChildRunInfo => ({
  toolUseId: `t-${sessionId}`,
  sessionId,
  workflowId: `session-${sessionId}`,
  agentPath,
  subagent: agentPath.split('/').at(-1)!,
  startedAt: 0,
  status: 'completed',
});

/** Query answers by workflow id and query name; `children` of an unknown id: none. */
function fakeTree(
  answers: Record<string, { timeline?: TimelineEntry[]; children?: ChildRunInfo[] | 'old worker' }>,
) {
  const workflows = {
    getHandle: (workflowId: string) => ({ workflowId }),
  } as unknown as WorkflowClient;
  const asked: string[] = [];
  const query = async <T>(
    handle: WorkflowHandle,
    definition: QueryDefinition<T, []>,
  ): Promise<T> => {
    asked.push(`${handle.workflowId} ${definition.name}`);
    const answer = answers[handle.workflowId] ?? {};
    if (definition.name === 'children') {
      if (answer.children === 'old worker') throw new QueryNotRegisteredError('no children', 0);
      return (answer.children ?? []) as T;
    }
    return (answer.timeline ?? []) as T;
  };
  return { workflows, query, asked };
}

describe('subagentTimelines', () => {
  it("tags each sub-agent's entries with its session and path, down the tree", async () => {
    const { workflows, query } = fakeTree({
      'session-p': { children: [child('p/0-a', 'main/lead')] },
      'session-p/0-a': {
        timeline: [entry(0, 20)],
        children: [child('p/0-a/0-b', 'main/lead/helper')],
      },
      'session-p/0-a/0-b': { timeline: [entry(0, 30)] },
    });
    const handle = workflows.getHandle('session-p');
    const found = await subagentTimelines(workflows, handle, 4, query);
    expect(found).toEqual([
      { ...entry(0, 20), sessionId: 'p/0-a', agentPath: 'main/lead' },
      { ...entry(0, 30), sessionId: 'p/0-a/0-b', agentPath: 'main/lead/helper' },
    ]);
  });

  it('stops at the depth given, and takes a worker without the children query for none', async () => {
    const { workflows, query, asked } = fakeTree({
      'session-p': { children: [child('p/0-a', 'main/lead')] },
      'session-p/0-a': { timeline: [entry(0, 20)], children: 'old worker' },
    });
    const handle = workflows.getHandle('session-p');
    expect(await subagentTimelines(workflows, handle, 0, query)).toEqual([]);
    expect(asked).toEqual([]);
    expect(await subagentTimelines(workflows, handle, 4, query)).toHaveLength(1);
  });
});

describe('mergeByStart', () => {
  it("puts a sub-agent's entries between the Task call's PreToolUse and PostToolUse", () => {
    const pre = entry(0, 10, HookEvent.PreToolUse);
    const post = entry(1, 50, HookEvent.PostToolUse);
    const inChild = { ...entry(0, 20), sessionId: 'p/0-a', agentPath: 'main/lead' };
    expect(mergeByStart([pre, post], [inChild])).toEqual([pre, inChild, post]);
  });

  it("keeps the session's entry first when one of a sub-agent started at the same time", () => {
    const own = entry(3, 10);
    const inChild = { ...entry(0, 10), sessionId: 'p/0-a', agentPath: 'main/lead' };
    expect(mergeByStart([own], [inChild])).toEqual([own, inChild]);
  });
});
